"""The merchants' MCP sources as a ``ToolSource``: each merchant's servers, their tools, per tenant.

Sources are read from the database at most every few seconds per merchant, and each server's
tool list is held by its connection (``tools.toolsets.mcp.connection``). A server that cannot be listed
leaves its tools out of that turn (logged) and never stops the merchant's other tools.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import structlog
from mcp.types import Tool as McpTool

from tools.db import Database
from tools.errors import NotFoundError
from tools.tool import Scope, Tool
from tools.toolsets.mcp.building import (
    Classified,
    annotated,
    classify,
    read_or_write,
    sentence_problem,
    write_form,
)
from tools.toolsets.mcp.config import SOURCE_NAME, SourceConfig, ToolRule, model_name
from tools.toolsets.mcp.connection import ServerError, SourceClient, SourceClients, unreachable
from tools.toolsets.mcp.news import NewTools, unreviewed
from tools.toolsets.mcp.store import Source, Sources

__all__ = ["Listed", "McpTools", "Reviewed"]

log = structlog.get_logger("countersign.mcp")

_SOURCES_TTL = 5.0  # seconds a merchant's list of sources is reused
# Seconds a turn waits for a server that has not listed its tools yet (a stdio server
# starting); past it the turn goes on without that server's tools, which come next turn.
TURN_BUDGET = 3.0
_SEPARATOR = "__"


@dataclass(frozen=True, slots=True)
class Listed:
    """One tool of one source, as ``countersign mcp tools`` prints it."""

    source: str
    name: str
    shown_as: str | None
    classified: Classified
    # Why the owner's sentence for it is not its card's first line (``sentence_problem``).
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class Reviewed:
    """What one review accepted that was not accepted before (with what the server marks each
    as), and every tool of the source as classified now."""

    accepted: dict[str, Scope]
    listed: list[Listed]


class McpTools:
    """Every merchant's MCP tools, for the catalogue."""

    def __init__(
        self,
        db: Database,
        clients: SourceClients | None = None,
        *,
        sources_ttl: float = _SOURCES_TTL,
    ) -> None:
        self.sources = Sources(db)
        self.clients = clients or SourceClients()
        self._sources_ttl = sources_ttl
        self._known: dict[int, tuple[list[Source], float]] = {}
        # The tools built from each source's listing, kept while the listing, the rules and
        # what the owner accepted are the same, so a turn offers the same tool objects (and
        # reuses its toolset).
        self._built: dict[tuple[int, str], tuple[int, Source, list[Tool]]] = {}

    async def tools(self, tenantid: int) -> Sequence[Tool]:
        sources = await self._configs(tenantid)
        listed = await asyncio.gather(*(self._listing(tenantid, s.config) for s in sources))
        found: list[Tool] = []
        for stored, tools in zip(sources, listed, strict=True):
            if tools is None:
                continue
            try:
                source = await self._accepted(tenantid, stored, tools)
            except NotFoundError:
                continue  # removed since it was read: its tools went with it
            found.extend(self._build(tenantid, source, tools))
        return found

    def _build(self, tenantid: int, source: Source, tools: list[McpTool]) -> list[Tool]:
        config, accepted = source.config, source.accepted or {}
        key = (tenantid, config.name)
        kept = self._built.get(key)
        if kept is not None and kept[0] == id(tools) and kept[1] == source:
            return kept[2]
        connect = self._connect(tenantid, config)
        made = (read_or_write(config, tool, connect, accepted) for tool in tools)
        built = [t for t in made if t]
        self._built[key] = (id(tools), source, built)
        return built

    async def _accepted(self, tenantid: int, source: Source, tools: list[McpTool]) -> Source:
        """The source with what the owner accepted: on its first listing since it was stored
        (connected, or imported and never listed), the tools it lists now."""
        if source.accepted is not None:
            return source
        first = {tool.name: annotated(tool) for tool in tools}
        stored = await self.sources.first_listing(tenantid, source.config.name, first)
        # The next turn reads the recorded set, not this source's stale copy.
        self._known.pop(tenantid, None)
        # Debug: `countersign mcp tools` shows INFO on stderr, where one line says what failed.
        log.debug("mcp.accepted", tenant=tenantid, source=source.config.name, tools=len(first))
        return stored

    async def card_tool(self, tenantid: int, name: str) -> Tool | None:
        source, _, tool_name = name.partition(_SEPARATOR)
        if not tool_name:
            return None
        found = next((s for s in await self._configs(tenantid) if s.config.name == source), None)
        if found is None:
            return None
        config, accepted = found.config, found.accepted or {}
        connect = self._connect(tenantid, config)
        try:
            tools = await (await connect()).tools()
        except ServerError as failed:
            # Still the card's write, so the approval fails it with the reason, nothing sent.
            said = unreachable(config.name, failed, approving=True)
            return write_form(config, tool_name, None, connect, accepted=accepted, unreachable=said)
        listed = next((t for t in tools if t.name == tool_name), None)
        return write_form(config, tool_name, listed, connect, accepted=accepted)

    def owns(self, tenantid: int, name: str) -> bool:
        del tenantid  # every merchant's source tools are named alike
        source, separator, _ = name.partition(_SEPARATOR)
        return bool(separator) and SOURCE_NAME.match(source) is not None

    async def listed(self, tenantid: int) -> list[Listed]:
        """Every tool of every source of one merchant with how it is classified, listed fresh.

        Raises ``NotFoundError`` naming a source that could not be listed.
        """
        rows: list[Listed] = []
        for source in await self.sources.sources(tenantid):
            rows.extend(await self.listed_source(tenantid, source))
        return rows

    async def listed_source(self, tenantid: int, source: Source) -> list[Listed]:
        """One source's tools with how each is classified, listed fresh (on its first listing,
        what it lists is recorded as what the owner connected).

        Raises ``NotFoundError`` saying why the source could not be listed.
        """
        tools = await self.listing(tenantid, source.config)
        return _rows(await self._accepted(tenantid, source, tools), tools)

    async def review(self, tenantid: int, source: Source, named: Mapping[str, Scope]) -> Reviewed:
        """Records the owner's review of one source, listed fresh: every tool it lists now,
        as its annotations say; or, with ``named``, those tools only, as the owner says (kept as
        their ``--read`` / ``--write`` rules).

        Raises ``NotFoundError`` saying why the source could not be listed, or naming a tool it
        does not list; nothing is recorded then.
        """
        tools = await self.listing(tenantid, source.config)
        source = await self._accepted(tenantid, source, tools)
        by_name = {tool.name: tool for tool in tools}
        unknown = sorted(set(named) - set(by_name))
        if unknown:
            raise NotFoundError(
                f"The {source.config.name} server does not list {', '.join(unknown)} (it lists "
                f"{', '.join(sorted(by_name)) or 'nothing'}); nothing was reviewed."
            )
        if named:
            accepted = {name: annotated(by_name[name]) for name in named}
            rules = {name: ToolRule(scope=scope) for name, scope in named.items()}
            stored = await self.sources.review(tenantid, source.config.name, accepted, rules=rules)
        else:
            accepted = {tool.name: annotated(tool) for tool in tools}
            stored = await self.sources.review(tenantid, source.config.name, accepted, replace=True)
        self.forget(tenantid)
        before = source.accepted or {}
        fresh = {name: said for name, said in accepted.items() if before.get(name) is not said}
        return Reviewed(fresh, _rows(stored, tools))

    async def listing(self, tenantid: int, config: SourceConfig) -> list[McpTool]:
        """The source's tools, listed fresh; ``NotFoundError`` saying why they could not be."""
        connection = await self.clients.of(tenantid, config)
        try:
            return await connection.tools(fresh=True)
        except ServerError as failed:
            raise NotFoundError(f"{str(failed)[:1].upper()}{str(failed)[1:]}.") from failed

    async def untold(self, tenantid: int) -> list[NewTools]:
        """The merchant's tools its owner has not reviewed and was not told of, recorded as told:
        whoever gets them tells the owner, once, however many processes ask.

        Lists a source only as a turn would (what it listed last, or a listing due, within
        ``TURN_BUDGET``); a source not listed yet since it was stored has nothing new.
        """
        found: list[NewTools] = []
        for source in await self._configs(tenantid):
            tools = await self._listing(tenantid, source.config)
            if tools is None or source.accepted is None:
                continue
            config, accepted = source.config, source.accepted
            news = {t.name: annotated(t) for t in tools if unreviewed(config, t, accepted)}
            fresh = await self.sources.tell(tenantid, config.name, news) if news else {}
            if fresh:
                found.append(NewTools(config.name, fresh))
        return found

    async def merchants(self) -> list[int]:
        """The merchants with at least one source: whom a sweep asks ``untold`` of."""
        return list(dict.fromkeys(tenantid for tenantid, _ in await self.sources.every()))

    def forget(self, tenantid: int) -> None:
        """Reads the merchant's sources again on next use (after ``mcp add`` or ``remove``)."""
        self._known.pop(tenantid, None)
        for key in [key for key in self._built if key[0] == tenantid]:
            del self._built[key]

    async def aclose(self) -> None:
        await self.clients.aclose()

    async def _configs(self, tenantid: int) -> list[Source]:
        known = self._known.get(tenantid)
        if known is not None and time.monotonic() - known[1] < self._sources_ttl:
            return known[0]
        sources = await self.sources.sources(tenantid)
        self._known[tenantid] = (sources, time.monotonic())
        return sources

    async def _listing(self, tenantid: int, config: SourceConfig) -> list[McpTool] | None:
        """What a turn offers of one source: never more than ``TURN_BUDGET`` seconds of wait."""
        connection = await self.clients.of(tenantid, config)
        found = await connection.tools_within(TURN_BUDGET)
        if found is None:
            log.info("mcp.not_yet_listed", tenant=tenantid, source=config.name)
        return found

    async def warm(self) -> None:
        """Starts every merchant's servers and lists their tools, so no first turn waits."""
        try:
            every = await self.sources.every()
        except Exception:  # a start-up nicety: turns list the servers anyway
            log.exception("mcp.not_warmed")
            return
        for tenantid, config in every:
            connection = await self.clients.of(tenantid, config)
            await connection.tools_within(0)

    def _connect(self, tenantid: int, config: SourceConfig) -> _Connector:
        return _Connector(self.clients, tenantid, config)


def _rows(source: Source, tools: list[McpTool]) -> list[Listed]:
    config, accepted = source.config, source.accepted or {}
    return [
        Listed(
            config.name,
            t.name,
            model_name(config.name, t.name),
            classify(config, t, accepted),
            sentence_problem(config, t),
        )
        for t in tools
    ]


class _Connector:
    """The connection of one source, looked up when a tool runs (it may have been replaced)."""

    def __init__(self, clients: SourceClients, tenantid: int, config: SourceConfig) -> None:
        self._clients, self._tenantid, self._config = clients, tenantid, config

    async def __call__(self) -> SourceClient:
        return await self._clients.of(self._tenantid, self._config)
