"""The MCP servers this process talks to: one connection per merchant's source, kept and reused.

A stdio server is started once and started again when it has died, before the next request of
any kind (a listing, a read, a preview, a write); an HTTP one keeps its connection pool. Each connection lives in a task of its own (the SDK's client is a context that
must be entered and left in one task) and is used from any other.

What a caller needs from a failure is whether anything reached the server:

- ``NotSentError``: it could not be reached (not started, refused, not answering a ping), so
  nothing was sent. A write that gets this failed and changed nothing.
- ``NoAnswerError``: the request left and no answer came (timeout, lost connection, the server
  died mid-call). A write that gets this has an unknown outcome and is never sent again blindly.

A write is preceded by a request the server must answer (a tool listing), so that the first is known for certain; the cost is one round
trip on a path a person just waited for anyway. A request this connection had answered within
``ANSWERED_WITHIN`` (the card's preview, asked again just before the call) says the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar, cast

import httpx2
import structlog
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.types import (
    CallToolResult,
    RequestParamsMeta,
    Tool,
    ToolListChangedNotification,
)

from tools.toolsets.mcp.config import MissingSecretError, SourceConfig
from tools.toolsets.mcp.sealing import SecretBox
from tools.toolsets.mcp.transport import opened_client

__all__ = [
    "NoAnswerError",
    "NotConnectableError",
    "NotSentError",
    "ServerError",
    "SourceClient",
    "SourceClients",
    "unreachable",
]

log = structlog.get_logger("countersign.mcp")

_T = TypeVar("_T")
# How long a server's tool list is used before it is listed again (a server that can tell us
# sooner does, with ``notifications/tools/list_changed``).
LIST_TTL = 60.0
_STOP_WAIT = 5.0
# Starting a stdio server (or a first HTTP handshake) may take longer than one request's
# timeout: an interpreter and its imports, on a busy machine.
_START_WAIT = 20.0
# How recent an answer on the same connection stands for the probe before a write: an approval
# asked its server three times (preview, probe, call) where the preview already said it is there.
ANSWERED_WITHIN = 1.0


class ServerError(Exception):
    """A source could not do what was asked; the message names it and says what happened."""


class NotSentError(ServerError):
    """Nothing reached the server."""


class NoAnswerError(ServerError):
    """The request was sent and no answer came back."""


class NotConnectableError(NotSentError):
    """Nothing was sent because the source cannot be connected as stored (a secret it names is
    not set, or cannot be opened here): the owner has something to set, not a server to wait for."""


def unreachable(name: str, failed: ServerError, *, approving: bool) -> str:
    """What a person reads when a card could not reach its server (nothing was sent), in plain
    words: the transport's own ("Connection closed", "unhandled errors in a TaskGroup") once
    reached the card and said nothing a person could act on. The reason is logged instead.

    ``approving``: said on a card that was approved, which then fails (nothing was sent), so
    the person is told to ask again rather than to press a button the failed card no longer has.
    """
    log.warning("mcp.unreachable", source=name, error=str(failed))
    if isinstance(failed, NotConnectableError):
        head = f"{str(failed)[:1].upper()}{str(failed)[1:]}; nothing was sent."
        return f"{head} Ask for it again once that is done." if approving else head
    if approving:
        return (
            f"The {name} server is not answering; nothing was sent. "
            "Ask for it again once the server is back."
        )
    return f"The {name} server is not answering, so nothing could be prepared or sent."


class SourceClient:
    """One source of one merchant, connected on first use and again after it dropped."""

    def __init__(
        self, config: SourceConfig, *, list_ttl: float = LIST_TTL, secrets: SecretBox | None = None
    ) -> None:
        self.config = config
        self._list_ttl, self._secrets = list_ttl, secrets
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._listing: tuple[list[Tool], float] | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._answered: tuple[Client, float] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    async def tools(self, *, fresh: bool = False) -> list[Tool]:
        """The server's tools, listed again after ``list_ttl`` or when it said they changed."""
        listing = self._listing
        if not fresh and listing is not None and time.monotonic() - listing[1] < self._list_ttl:
            return listing[0]
        found = await self._twice(self._list_all, sent=False)
        self._listing = (found, time.monotonic())
        return found

    async def tools_within(self, budget: float) -> list[Tool] | None:
        """The tools a turn may offer, waiting at most ``budget`` seconds for a listing that is
        due: the fresh one if it comes in time, else the last one (or None before any).

        A turn never waits for the whole listing, which would make the first message after a
        start wait for a stdio server to start (seconds on a busy machine), and let a server
        that hangs hold every turn of its merchant for the timeout. A turn loses at most the
        server's tools, for that turn only, while the listing goes on in the background.
        """
        listing = self._listing
        due = listing is None or time.monotonic() - listing[1] >= self._list_ttl
        if due and (self._refreshing is None or self._refreshing.done()):
            self._refreshing = asyncio.create_task(self._refresh(), name=f"mcp list:{self.name}")
        if due and self._refreshing is not None and budget > 0:
            await asyncio.wait({self._refreshing}, timeout=budget)
        return self._listing[0] if self._listing is not None else None

    async def _refresh(self) -> None:
        try:
            await self.tools(fresh=True)
        except ServerError as failed:
            log.warning("mcp.not_listed", source=self.name, error=str(failed))

    async def read(self, tool: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """Calls a tool whose outcome does not matter if lost (a read, a preview)."""
        return await self._twice(lambda client: client.call_tool(tool, dict(arguments)), sent=True)

    async def _twice(self, request: Callable[[Client], Awaitable[_T]], *, sent: bool) -> _T:
        """A request that may be sent twice (a listing, a read, a preview), asked again once
        on a fresh connection when the transport broke under it.

        A stdio server that died is started again before the next request (``_connected``),
        but one killed a moment ago is found dead only by the request itself: asked once, that
        request fails with "Connection closed", and a preview re-read on Approve fails its card
        although the server could simply be started again. A timeout is not asked
        again: it would double the wait of a server that hangs.
        """
        client = await self._connected()
        try:
            return await self._ask(client, request(client), sent=sent)
        except ServerError as failed:
            if failed.__cause__ is None:  # a timeout, or nothing that broke the transport
                raise
            log.info("mcp.asked_again", source=self.name, error=str(failed))
        client = await self._connected()
        return await self._ask(client, request(client), sent=sent)

    async def write(
        self, tool: str, arguments: Mapping[str, Any], *, meta: Mapping[str, Any]
    ) -> CallToolResult:
        """Sends the one ``tools/call`` of an approved write, once a request it answers (a tool
        listing: the 2026-07-28 protocol has no ping) says it is there."""
        client = await self._connected()
        try:
            if not self._answered_lately(client):
                await self._ask(client, self._probe(client), sent=False)
        except NotSentError:
            # A server that died since its last call is started again once before giving up.
            await self._drop()
            client = await self._connected()
            await self._ask(client, self._probe(client), sent=False)
        call = client.call_tool(tool, dict(arguments), meta=cast("RequestParamsMeta", dict(meta)))
        return await self._ask(client, call, sent=True)

    async def aclose(self) -> None:
        refreshing, self._refreshing = self._refreshing, None
        if refreshing is not None and not refreshing.done():
            refreshing.cancel()
            with contextlib.suppress(BaseException):
                await refreshing
        await self._drop()

    def _answered_lately(self, client: Client) -> bool:
        answered = self._answered
        return (
            answered is not None
            and answered[0] is client
            and time.monotonic() - answered[1] < ANSWERED_WITHIN
        )

    async def _probe(self, client: Client) -> None:
        await client.list_tools(cache_mode="refresh")

    async def _list_all(self, client: Client) -> list[Tool]:
        found: list[Tool] = []
        cursor: str | None = None
        for _ in range(100):  # a server that pages forever is cut off at 100 pages
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            found.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return found

    async def _ask(self, client: Client, pending: Awaitable[_T], *, sent: bool) -> _T:
        """Awaits one request within the source's timeout, telling sent from not sent."""
        try:
            async with asyncio.timeout(self.config.timeout):
                answer = await pending
        except TimeoutError:
            await self._drop()
            raise self._lost(sent, f"did not answer within {self.config.timeout:g} s") from None
        except ServerError:
            raise
        except Exception as broken:
            # Whatever broke it (a stdio server that died, a dropped HTTP connection), the next
            # request starts afresh: a server restarted since is then found again.
            if self._client is client:
                await self._drop()
            reason = str(broken) or type(broken).__name__
            raise self._lost(sent and not _refused(broken), reason) from broken
        self._answered = (client, time.monotonic())
        return answer

    def _lost(self, sent: bool, reason: str) -> ServerError:
        if sent:
            return NoAnswerError(f"the {self.name} server {reason}")
        return NotSentError(f"the {self.name} server could not be reached ({reason})")

    async def _connected(self) -> Client:
        async with self._lock:
            # A server that died has set ``_stop`` (its output ended) while its task may still
            # be winding down: that client would answer "Connection closed".
            alive = self._task is not None and not self._task.done() and not self._stop.is_set()
            if self._client is not None and alive:
                return self._client
            await self._drop_locked()
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._hold(ready, self._stop), name=f"mcp:{self.name}")
            starting = max(self.config.timeout, _START_WAIT)
            try:
                async with asyncio.timeout(starting):
                    self._client = await asyncio.shield(ready)
            except TimeoutError:
                await self._drop_locked()
                raise NotSentError(
                    f"the {self.name} server did not start within {starting:g} s"
                ) from None
            except ServerError:
                await self._drop_locked()
                raise
            return self._client

    async def _hold(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        """Holds the connection open until asked to stop or the server goes away: a stdio
        server whose output ended sets ``stop`` too, so this task ends and the next request
        of any kind starts the server again (``_connected``)."""
        opening = opened_client(self.config, self._on_message, ended=stop, secrets=self._secrets)
        try:
            async with opening as client:
                ready.set_result(client)
                await stop.wait()
            if self._task is asyncio.current_task():
                log.warning("mcp.server_ended", source=self.name)
        except BaseException as broken:
            if not ready.done():
                if isinstance(broken, MissingSecretError):
                    ready.set_exception(NotConnectableError(f"the {self.name} server: {broken}"))
                else:
                    reason = str(broken) or type(broken).__name__
                    ready.set_exception(
                        NotSentError(f"the {self.name} server could not be reached ({reason})")
                    )
            elif not isinstance(broken, asyncio.CancelledError):
                log.warning("mcp.connection_lost", source=self.name, error=repr(broken))
            if isinstance(broken, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                raise

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, ToolListChangedNotification):
            self._listing = None

    async def _drop(self) -> None:
        async with self._lock:
            await self._drop_locked()

    async def _drop_locked(self) -> None:
        task, self._task, self._client = self._task, None, None
        if task is None:
            return
        self._stop.set()
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(_STOP_WAIT):
                await asyncio.shield(task)
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _refused(broken: BaseException) -> bool:
    """Whether a transport failure proves the request never left (the connection was refused)."""
    seen: BaseException | None = broken
    while seen is not None:
        if isinstance(seen, httpx2.ConnectError | ConnectionRefusedError):
            return True
        if isinstance(seen, BaseExceptionGroup):
            return all(_refused(inner) for inner in seen.exceptions)
        seen = seen.__cause__ or seen.__context__
    return False


class SourceClients:
    """Every source this process has talked to, one ``SourceClient`` each, kept until closed.

    A source whose stored config changed (a new URL, a new header) gets a new connection; the
    old one is closed.
    """

    def __init__(self, *, list_ttl: float = LIST_TTL, secrets: SecretBox | None = None) -> None:
        self._list_ttl, self._secrets = list_ttl, secrets
        self._held: dict[tuple[int, str], tuple[str, SourceClient]] = {}

    async def of(self, tenantid: int, config: SourceConfig) -> SourceClient:
        key, version = (tenantid, config.name), _version(config)
        held = self._held.get(key)
        if held is not None and held[0] == version:
            held[1].config = config  # the rules may have changed; the connection has not
            return held[1]
        if held is not None:
            await held[1].aclose()
        connection = SourceClient(config, list_ttl=self._list_ttl, secrets=self._secrets)
        self._held[key] = (version, connection)
        return connection

    async def forget(self, tenantid: int, name: str) -> None:
        held = self._held.pop((tenantid, name), None)
        if held is not None:
            await held[1].aclose()

    async def aclose(self) -> None:
        held, self._held = list(self._held.values()), {}
        await asyncio.gather(*(connection.aclose() for _, connection in held))


def _version(config: SourceConfig) -> str:
    """What makes a connection the same one: where it goes and what it sends, not the rules."""
    where = config.model_dump_json(include={"url", "headers", "command", "args", "env", "timeout"})
    return hashlib.sha256(where.encode()).hexdigest()
