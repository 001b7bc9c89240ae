"""The MCP servers each merchant connected, and which of their tools the owner accepted: stored
here only; nothing here connects.

A source's tools are accepted when it is first listed after being stored (``first_listing``:
the tools the owner connected) and again when the owner reviews it (``review``). A tool the
server lists beyond those is new, and a write, until the owner reviews it
(``tools.toolsets.mcp.building.classify``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from tools.cards.tokens import Clock, utcnow
from tools.db import Database, McpSourceRow
from tools.errors import NotFoundError
from tools.tool import Scope
from tools.toolsets.mcp.config import SourceConfig, ToolRule

__all__ = ["Accepted", "Source", "Sources"]

# Each accepted tool, with what the server's annotations said of it when accepted.
Accepted = Mapping[str, Scope]


@dataclass(frozen=True, slots=True)
class Source:
    """One stored source: how it is connected, what the owner accepted of it, what they were
    told of."""

    config: SourceConfig
    # None: not listed since it was stored; its first listing is what the owner connected.
    accepted: dict[str, Scope] | None
    told: dict[str, Scope] = field(default_factory=dict)


class Sources:
    """A merchant's MCP sources, by name; one merchant never reads another's."""

    def __init__(self, db: Database, *, clock: Clock = utcnow) -> None:
        self._db, self._clock = db, clock

    async def put(self, tenantid: int, config: SourceConfig) -> bool:
        """Stores ``config`` under its name, replacing one of that name; True when it is new.

        What the owner accepted of a replaced source is forgotten with it: its next listing is
        what they connected now.
        """
        now = self._clock()
        stored = _stored(config)
        async with self._db.session(write=True) as session:
            row = await session.get(McpSourceRow, (tenantid, config.name))
            new = row is None
            if row is None:
                row = McpSourceRow(tenant_id=tenantid, name=config.name, added_at=now)
                session.add(row)
            row.config, row.changed_at = stored, now
            row.reviewed, row.told = None, None
            await session.commit()
        return new

    async def all(self, tenantid: int) -> list[SourceConfig]:
        return [source.config for source in await self.sources(tenantid)]

    async def sources(self, tenantid: int) -> list[Source]:
        """The merchant's sources with what the owner accepted of each, by name."""
        async with self._db.session() as session:
            rows = await session.scalars(
                select(McpSourceRow)
                .where(McpSourceRow.tenant_id == tenantid)
                .order_by(McpSourceRow.name)
            )
            return [_source(row) for row in rows]

    async def every(self) -> list[tuple[int, SourceConfig]]:
        """Every merchant's sources (for starting them with the process)."""
        async with self._db.session() as session:
            rows = await session.scalars(
                select(McpSourceRow).order_by(McpSourceRow.tenant_id, McpSourceRow.name)
            )
            return [(row.tenant_id, SourceConfig.model_validate(row.config)) for row in rows]

    async def get(self, tenantid: int, name: str) -> SourceConfig:
        return (await self.source(tenantid, name)).config

    async def source(self, tenantid: int, name: str) -> Source:
        async with self._db.session() as session:
            row = await session.get(McpSourceRow, (tenantid, name))
        if row is None:
            raise NotFoundError(f"No MCP server named {name!r} is connected.")
        return _source(row)

    async def first_listing(self, tenantid: int, name: str, listed: Accepted) -> Source:
        """Records ``listed`` as what the owner accepted, unless something already was (another
        process listed it first); the source as stored then."""
        async with self._db.session(write=True) as session:
            row = await _locked(session, tenantid, name)
            if row.reviewed is None:
                row.reviewed = _words(listed)
                await session.commit()
            return _source(row)

    async def review(
        self,
        tenantid: int,
        name: str,
        accepted: Accepted,
        *,
        rules: Mapping[str, ToolRule] | None = None,
        replace: bool = False,
    ) -> Source:
        """Records the owner's review: ``accepted`` on top of what was (or instead, with
        ``replace``), and ``rules`` laid over the source's own."""
        async with self._db.session(write=True) as session:
            row = await _locked(session, tenantid, name)
            before = {} if replace else _source(row).accepted or {}
            row.reviewed = _words({**before, **accepted})
            if rules:
                config = SourceConfig.model_validate(row.config).with_rules(dict(rules))
                row.config = _stored(config)
            row.changed_at = self._clock()
            await session.commit()
            return _source(row)

    async def change_rules(self, tenantid: int, name: str, rules: Mapping[str, ToolRule]) -> Source:
        """Lays ``rules`` over the stored source's own, tool by tool, keeping what the owner
        accepted of it (``countersign mcp set``): ``put`` would forget it."""
        async with self._db.session(write=True) as session:
            row = await _locked(session, tenantid, name)
            config = SourceConfig.model_validate(row.config).with_rules(dict(rules))
            row.config, row.changed_at = _stored(config), self._clock()
            await session.commit()
            return _source(row)

    async def tell(self, tenantid: int, name: str, news: Accepted) -> dict[str, Scope]:
        """Of ``news`` (tools not accepted, with what the server says of each), those the owner
        was not told of yet as the server says them now, recorded as told: whoever gets them
        tells the owner, once, however many processes ask."""
        async with self._db.session(write=True) as session:
            row = await _locked(session, tenantid, name)
            told = _source(row).told
            fresh = {tool: said for tool, said in news.items() if told.get(tool) is not said}
            if fresh:
                row.told = _words({**told, **fresh})
                await session.commit()
            return fresh

    async def remove(self, tenantid: int, name: str) -> None:
        async with self._db.session(write=True) as session:
            gone = await session.execute(
                delete(McpSourceRow).where(
                    McpSourceRow.tenant_id == tenantid, McpSourceRow.name == name
                )
            )
            await session.commit()
        if not gone.rowcount:  # type: ignore[attr-defined]
            raise NotFoundError(f"No MCP server named {name!r} is connected.")


async def _locked(session: AsyncSession, tenantid: int, name: str) -> McpSourceRow:
    """The source's row, held until the transaction ends: two processes recording at once
    (two first listings, two tellings) take turns, so the second sees the first's."""
    row = await session.get(McpSourceRow, (tenantid, name), with_for_update=True)
    if row is None:
        raise NotFoundError(f"No MCP server named {name!r} is connected.")
    return row


def _stored(config: SourceConfig) -> dict[str, object]:
    return config.model_dump(mode="json", exclude_defaults=True)


def _source(row: McpSourceRow) -> Source:
    return Source(
        SourceConfig.model_validate(row.config),
        _scopes(row.reviewed) if row.reviewed is not None else None,
        _scopes(row.told or {}),
    )


def _scopes(words: Mapping[str, str]) -> dict[str, Scope]:
    return {tool: Scope(word) for tool, word in words.items()}


def _words(scopes: Accepted) -> dict[str, str]:
    return {tool: str(scope) for tool, scope in sorted(scopes.items())}
