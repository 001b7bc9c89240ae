"""The merchants' MCP sources as a ``ToolSource``: each merchant's servers, their tools, per tenant.

Sources are read from the database at most every few seconds per merchant, and each server's
tool list is held by its connection (``tools.mcp.connection``). A server that cannot be listed
leaves its tools out of that turn (logged) and never stops the merchant's other tools.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass

import structlog
from mcp.types import Tool as McpTool

from tools.db import Database
from tools.errors import NotFoundError
from tools.mcp.building import Classified, classify, read_or_write, write_form
from tools.mcp.config import SOURCE_NAME, SourceConfig, model_name
from tools.mcp.connection import Connection, Connections, ServerError, unreachable
from tools.mcp.store import Sources
from tools.tool import Tool

__all__ = ["Listed", "McpTools"]

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


class McpTools:
    """Every merchant's MCP tools, for the catalogue."""

    def __init__(
        self,
        db: Database,
        connections: Connections | None = None,
        *,
        sources_ttl: float = _SOURCES_TTL,
    ) -> None:
        self.sources = Sources(db)
        self.connections = connections or Connections()
        self._sources_ttl = sources_ttl
        self._known: dict[int, tuple[list[SourceConfig], float]] = {}
        # The tools built from each source's listing, kept while the listing and the rules are
        # the same, so a turn offers the same tool objects (and reuses its toolset).
        self._built: dict[tuple[int, str], tuple[int, SourceConfig, list[Tool]]] = {}

    async def tools(self, tenantid: int) -> Sequence[Tool]:
        configs = await self._configs(tenantid)
        listed = await asyncio.gather(*(self._listing(tenantid, c) for c in configs))
        found: list[Tool] = []
        for config, tools in zip(configs, listed, strict=True):
            if tools is not None:
                found.extend(self._build(tenantid, config, tools))
        return found

    def _build(self, tenantid: int, config: SourceConfig, tools: list[McpTool]) -> list[Tool]:
        key = (tenantid, config.name)
        kept = self._built.get(key)
        if kept is not None and kept[0] == id(tools) and kept[1] == config:
            return kept[2]
        connect = self._connect(tenantid, config)
        built = [t for t in (read_or_write(config, tool, connect) for tool in tools) if t]
        self._built[key] = (id(tools), config, built)
        return built

    async def card_tool(self, tenantid: int, name: str) -> Tool | None:
        source, _, tool_name = name.partition(_SEPARATOR)
        if not tool_name:
            return None
        config = next((c for c in await self._configs(tenantid) if c.name == source), None)
        if config is None:
            return None
        connect = self._connect(tenantid, config)
        try:
            tools = await (await connect()).tools()
        except ServerError as failed:
            # Still the card's write, so the approval fails it with the reason, nothing sent.
            said = unreachable(config.name, failed, approving=True)
            return write_form(config, tool_name, None, connect, unreachable=said)
        listed = next((t for t in tools if t.name == tool_name), None)
        return write_form(config, tool_name, listed, connect)

    def owns(self, tenantid: int, name: str) -> bool:
        del tenantid  # every merchant's source tools are named alike
        source, separator, _ = name.partition(_SEPARATOR)
        return bool(separator) and SOURCE_NAME.match(source) is not None

    async def listed(self, tenantid: int) -> list[Listed]:
        """Every tool of every source of one merchant with how it is classified, listed fresh.

        Raises ``NotFoundError`` naming a source that could not be listed.
        """
        rows: list[Listed] = []
        for config in await self.sources.all(tenantid):
            rows.extend(await self.listed_source(tenantid, config))
        return rows

    async def listed_source(self, tenantid: int, config: SourceConfig) -> list[Listed]:
        """One source's tools with how each is classified, listed fresh.

        Raises ``NotFoundError`` saying why the source could not be listed.
        """
        connection = await self.connections.of(tenantid, config)
        try:
            tools = await connection.tools(fresh=True)
        except ServerError as failed:
            raise NotFoundError(f"{str(failed)[:1].upper()}{str(failed)[1:]}.") from failed
        return [
            Listed(config.name, t.name, model_name(config.name, t.name), classify(config, t))
            for t in tools
        ]

    def forget(self, tenantid: int) -> None:
        """Reads the merchant's sources again on next use (after ``mcp add`` or ``remove``)."""
        self._known.pop(tenantid, None)
        for key in [key for key in self._built if key[0] == tenantid]:
            del self._built[key]

    async def aclose(self) -> None:
        await self.connections.aclose()

    async def _configs(self, tenantid: int) -> list[SourceConfig]:
        known = self._known.get(tenantid)
        if known is not None and time.monotonic() - known[1] < self._sources_ttl:
            return known[0]
        configs = await self.sources.all(tenantid)
        self._known[tenantid] = (configs, time.monotonic())
        return configs

    async def _listing(self, tenantid: int, config: SourceConfig) -> list[McpTool] | None:
        """What a turn offers of one source: never more than ``TURN_BUDGET`` seconds of wait."""
        connection = await self.connections.of(tenantid, config)
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
            connection = await self.connections.of(tenantid, config)
            await connection.tools_within(0)

    def _connect(self, tenantid: int, config: SourceConfig) -> _Connector:
        return _Connector(self.connections, tenantid, config)


class _Connector:
    """The connection of one source, looked up when a tool runs (it may have been replaced)."""

    def __init__(self, connections: Connections, tenantid: int, config: SourceConfig) -> None:
        self._connections, self._tenantid, self._config = connections, tenantid, config

    async def __call__(self) -> Connection:
        return await self._connections.of(self._tenantid, self._config)
