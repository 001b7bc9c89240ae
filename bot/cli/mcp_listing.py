"""Lists a merchant's MCP servers' tools for ``countersign mcp``: the only request it sends them.

Listing a source for the first time since it was stored records what it lists as the tools the
owner connected (``tools.toolsets.mcp``); nothing here runs a tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

from bot.cli.failures import CliError
from tools.db import Database
from tools.errors import NotFoundError
from tools.toolsets.mcp import (
    Listed,
    McpTools,
    SecretBox,
    Source,
    SourceClients,
    SourceConfig,
    Sources,
)

__all__ = ["Listing", "lines", "listings", "on_source"]

# A source's listing: its tools, or the sentence saying why it could not be listed.
Listing = tuple[SourceConfig, list[Listed] | str]

_NOT_OFFERED = "not offered: name too long or not [A-Za-z0-9_-]"

T = TypeVar("T")


async def on_source(
    sources: Sources,
    tenant: tuple[int, str],
    name: str,
    work: Callable[[int, str], Awaitable[T]],
) -> T:
    """``work`` on the source ``name`` of ``tenant`` (its id and name); a ``CliError`` naming
    the servers it has when there is none of that name."""
    tenantid, merchant = tenant
    try:
        return await work(tenantid, name)
    except NotFoundError:
        names = ", ".join(c.name for c in await sources.all(tenantid)) or "none yet"
        raise CliError(
            f"{merchant} has no MCP server named {name!r}. Its servers: {names} "
            f'(countersign mcp list "{merchant}").'
        ) from None


async def listings(
    db: Database, tenantid: int, sources: Sequence[Source], *, secrets: SecretBox | None = None
) -> list[Listing]:
    """Each source's tools as they are classified now, or why it could not be listed;
    ``secrets`` opens the values stored encrypted (``--store-secret``)."""
    mcp = McpTools(db, SourceClients(secrets=secrets))
    found: list[Listing] = []
    try:
        for source in sources:
            try:
                found.append((source.config, await mcp.listed_source(tenantid, source)))
            except NotFoundError as failed:
                found.append((source.config, str(failed)))
    finally:
        await mcp.aclose()
    return found


def lines(listed: Iterable[Listing]) -> list[str]:
    """One line per tool: the name the model sees, then ``classified.why``."""
    rows: list[tuple[str, str]] = []
    for config, found in listed:
        if isinstance(found, str):
            rows.append((config.name, f"not listed: {found}"))
        elif not found:
            rows.append((config.name, "lists no tools"))
        else:
            rows.extend(_row(one) for one in found)
    width = max((len(name) for name, _ in rows), default=0)
    return [f"{name.ljust(width)}  {why}" for name, why in rows]


def _row(listed: Listed) -> tuple[str, str]:
    if listed.shown_as is None:
        return f"{listed.source}__{listed.name}", _NOT_OFFERED
    if listed.refused is not None:
        # The owner's one chance to see it: a turn only logs it, and its cards read the title.
        return listed.shown_as, f"{listed.classified.why}; sentence not used: {listed.refused}"
    return listed.shown_as, listed.classified.why
