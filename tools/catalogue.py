"""Each merchant's tools: the reference ones every merchant has, and those of its own sources.

A merchant's sources (its MCP servers, ``tools.toolsets.mcp``) are offered only to that merchant: every
lookup names the tenant, and a source answers for one tenant at a time. The names of a source's
tools cannot collide with the reference ones (``tools.toolsets.mcp.config.model_name``), and a collision
would be refused here anyway, so a server cannot stand in for a reference tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

import structlog

from tools.tool import Tool

__all__ = ["Catalogue", "ToolSource"]

log = structlog.get_logger("countersign.catalogue")


class ToolSource(Protocol):
    """Tools that differ by merchant, looked up per tenant."""

    async def tools(self, tenantid: int) -> Sequence[Tool]:
        """The tenant's tools as they are classified now (reads and writes)."""

    async def card_tool(self, tenantid: int, name: str) -> Tool | None:
        """The write that runs a card of ``name``, whatever the tool is classified as now, or
        None when ``name`` is none of this tenant's."""

    def owns(self, tenantid: int, name: str) -> bool:
        """Whether ``name`` is named like one of this source's tools (its writes are external)."""

    async def warm(self) -> None:
        """Starts whatever it holds (servers, connections) before the first turn needs it."""

    async def aclose(self) -> None: ...


class Catalogue:
    """The reference tools plus, per merchant, the tools of its sources."""

    def __init__(self, reference: Iterable[Tool] = (), sources: Sequence[ToolSource] = ()) -> None:
        self._reference: dict[str, Tool] = {}
        self._sources = list(sources)
        for tool in reference:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._reference:
            raise ValueError(f"tool {tool.name} is registered twice")
        self._reference[tool.name] = tool

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)

    @property
    def reference(self) -> Mapping[str, Tool]:
        return self._reference

    async def of(self, tenantid: int) -> dict[str, Tool]:
        """Every tool of one merchant, by the name the model calls it."""
        found = dict(self._reference)
        for source in self._sources:
            for tool in await source.tools(tenantid):
                if tool.name in found:
                    log.warning("catalogue.name_taken", tenant=tenantid, tool=tool.name)
                    continue
                found[tool.name] = tool
        return found

    async def card_tool(self, tenantid: int, name: str) -> Tool | None:
        """The tool a card of ``name`` runs with, in that merchant's catalogue."""
        tool = self._reference.get(name)
        if tool is not None:
            return tool
        for source in self._sources:
            found = await source.card_tool(tenantid, name)
            if found is not None:
                return found
        return None

    def external(self, tenantid: int, name: str) -> bool:
        """Whether a card of ``name`` writes outside the database (its outcome after a crash
        cannot be known), answered without asking any server."""
        tool = self._reference.get(name)
        if tool is not None:
            return tool.external
        return any(source.owns(tenantid, name) for source in self._sources)

    async def warm(self) -> None:
        for source in self._sources:
            await source.warm()

    async def aclose(self) -> None:
        for source in self._sources:
            await source.aclose()
