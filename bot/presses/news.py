"""Tells each merchant's owners, once, in a DM from the app (a 1:1 chat in Teams), that its MCP
servers list tools they have not reviewed; never reviews, classifies or runs a tool.

A tool a server lists after the owner connected or last reviewed it is a write until they
review it (``countersign mcp review``). Without this sweep nobody told them: a tool the server
marked read-only silently became a card for every call, and the owner learnt of it only by
reading ``countersign mcp tools``. Which tools to tell of, once across processes, is the
engine's decision (``Untold.untold``); this module only takes the notice to the owners.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import structlog

from bot.adapter import Adapter, Reach, Words
from bot.presses.copies import address
from bot.services import Services
from tools import Issuee, Scope

__all__ = ["WITHIN", "News", "Notice", "Reach", "Untold"]

log = structlog.get_logger("bot.presses.news")

# Seconds one merchant's listings may take in a sweep: a server that hangs, or a merchant with
# many stdio servers starting, must not hold up the other merchants' notices.
WITHIN = 10.0

# The notice in the words of the surface that sends it.
Wording = Callable[[Words], str]


class Notice(Protocol):
    """Tools of one source its owner has not reviewed, with what the server marks each as."""

    @property
    def source(self) -> str: ...

    @property
    def tools(self) -> Mapping[str, Scope]: ...


class Untold(Protocol):
    """The merchants' sources as the sweep asks them (``tools.toolsets.mcp.McpTools`` is one)."""

    async def merchants(self) -> Sequence[int]: ...

    async def untold(self, tenantid: int) -> Sequence[Notice]:
        """The tools not reviewed nor told of yet, recorded as told as they are returned."""
        ...


class News:
    """The sweep: asks each merchant with sources for untold tools and tells its owners.

    ``every``: seconds before this process asks a merchant again. A listing that failed is
    due again at once, and the sweep runs every few seconds: asked every round, a stdio server
    that dies on start would be started again every few seconds in every process, where turns
    start it once a message. The server passes the tool lists' reuse time, so a merchant's
    servers are listed for the sweep no more often than a turn would list them.
    """

    def __init__(self, untold: Untold, *, every: float = 0.0, within: float = WITHIN) -> None:
        self.untold, self.every, self.within = untold, every, within
        self._next: dict[int, float] = {}
        self._round: asyncio.Task[None] | None = None

    def start(self, services: Services, reaches: Sequence[Reach]) -> None:
        """Starts a round of ``tell`` in its own task, unless the last one is still going.

        A round waits for servers to list (each merchant up to ``within``). Awaited inside
        the server's sweep loop, which also keeps the process's lease alive, many merchants'
        slow servers could let the lease lapse and another process settle this one's presses.
        """
        if self._round is not None and not self._round.done():
            return
        self._round = asyncio.create_task(self._logged(services, reaches), name="mcp news")

    async def stop(self) -> None:
        """Cancels the round in flight (on shutdown)."""
        if self._round is not None:
            self._round.cancel()
            await asyncio.gather(self._round, return_exceptions=True)

    async def _logged(self, services: Services, reaches: Sequence[Reach]) -> None:
        try:
            await self.tell(services, reaches)
        except Exception:  # logged in full; the next round tries again
            log.exception("mcp_news_failed")

    async def tell(self, services: Services, reaches: Sequence[Reach]) -> int:
        """Tells every merchant's owners of the tools that appeared; how many notices went out."""
        sent = 0
        for tenantid in await self.untold.merchants():
            at = time.monotonic()
            if self._next.get(tenantid, at) > at:
                continue
            self._next[tenantid] = at + self.every
            try:
                sent += await self._merchant(services, reaches, tenantid)
            except Exception:  # logged in full: one merchant's failure must not silence the rest
                log.exception("mcp_news_failed", tenant=tenantid)
        return sent

    async def _merchant(self, services: Services, reaches: Sequence[Reach], tenantid: int) -> int:
        try:
            async with asyncio.timeout(self.within):
                news = await self.untold.untold(tenantid)
        except TimeoutError:
            log.warning("mcp_news_slow", tenant=tenantid, seconds=self.within)
            return 0
        if not news:
            return 0
        # Told is recorded before any DM goes out (``untold`` records what it returns), so two
        # processes never both send it. A process killed between the two, a platform refusing
        # the DM, or the time bound falling just after the record, loses the notice: the owner
        # still sees the tools in `countersign mcp tools`, and each stays a write until
        # reviewed. Recording after sending would DM the owner once per process instead.
        return await _tell_owners(services, reaches, tenantid, news)


async def _tell_owners(
    services: Services, reaches: Sequence[Reach], tenantid: int, news: Sequence[Notice]
) -> int:
    """Sends each notice to each owner, on the first platform that reaches them."""
    merchant = await services.directory.merchant_name(tenantid) or f"merchant {tenantid}"
    owners = await services.registry.sweeps.owners(tenantid)
    places = await _installations(services, tenantid)
    sent = 0
    for notice in news:
        say = _wording(merchant, notice)
        reached = [o for o in owners if await _tell(services, reaches, places, o, say)]
        sent += len(reached)
        missed = [o.name for o in owners if o not in reached]
        if missed or not owners:
            # Info, not a warning: a merchant whose owner never joined the chat is expected.
            log.info(
                "mcp_news_unreached",
                tenant=tenantid,
                source=notice.source,
                tools=sorted(notice.tools),
                owners=missed,
            )
        if reached:
            log.info("mcp_news_told", tenant=tenantid, source=notice.source, owners=len(reached))
    return sent


async def _installations(services: Services, tenantid: int) -> dict[str, list[str]]:
    """The merchant's connected installations, by platform."""
    found: dict[str, list[str]] = {}
    for connected in await services.directory.connections.listing():
        if connected.tenantid == tenantid:
            found.setdefault(str(connected.platform), []).append(connected.installation)
    return found


async def _tell(
    services: Services,
    reaches: Sequence[Reach],
    places: Mapping[str, list[str]],
    owner: Issuee,
    say: Wording,
) -> bool:
    """Tells one owner through the first installation where they are found; whether it went out."""
    for reach in reaches:
        for installation in places.get(reach.platform, ()):
            if await _notified(services, reach, installation, owner.userid, say):
                return True
    return False


async def _notified(
    services: Services, reach: Reach, installation: str, userid: int, say: Wording
) -> bool:
    """Tells one person through one installation, if they are found there (``address``)."""
    told: list[bool] = []

    async def work(adapter: Adapter) -> None:
        user = await address(services, adapter, userid, installation)
        if user is not None:
            told.append(await adapter.notify(user, say(adapter.words)))

    await reach.with_installation(installation, work)
    return any(told)


def _wording(merchant: str, notice: Notice) -> Wording:
    def say(words: Words) -> str:
        return words.new_tools(merchant, notice.source, notice.tools)

    return say
