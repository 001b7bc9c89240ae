"""The MCP servers each merchant connected: added, replaced, listed and removed here only."""

from __future__ import annotations

from sqlalchemy import delete, select

from tools.db import Database, McpSourceRow
from tools.errors import NotFoundError
from tools.mcp.config import SourceConfig
from tools.tokens import Clock, utcnow

__all__ = ["Sources"]


class Sources:
    """A merchant's MCP sources, by name; one merchant never reads another's."""

    def __init__(self, db: Database, *, clock: Clock = utcnow) -> None:
        self._db, self._clock = db, clock

    async def put(self, tenantid: int, config: SourceConfig) -> bool:
        """Stores ``config`` under its name, replacing one of that name; True when it is new."""
        now = self._clock()
        stored = config.model_dump(mode="json", exclude_defaults=True)
        async with self._db.session(write=True) as session:
            row = await session.get(McpSourceRow, (tenantid, config.name))
            new = row is None
            if row is None:
                row = McpSourceRow(tenant_id=tenantid, name=config.name, added_at=now)
                session.add(row)
            row.config, row.changed_at = stored, now
            await session.commit()
        return new

    async def all(self, tenantid: int) -> list[SourceConfig]:
        async with self._db.session() as session:
            rows = await session.scalars(
                select(McpSourceRow)
                .where(McpSourceRow.tenant_id == tenantid)
                .order_by(McpSourceRow.name)
            )
            return [SourceConfig.model_validate(row.config) for row in rows]

    async def every(self) -> list[tuple[int, SourceConfig]]:
        """Every merchant's sources (for starting them with the process)."""
        async with self._db.session() as session:
            rows = await session.scalars(
                select(McpSourceRow).order_by(McpSourceRow.tenant_id, McpSourceRow.name)
            )
            return [(row.tenant_id, SourceConfig.model_validate(row.config)) for row in rows]

    async def get(self, tenantid: int, name: str) -> SourceConfig:
        async with self._db.session() as session:
            row = await session.get(McpSourceRow, (tenantid, name))
        if row is None:
            raise NotFoundError(f"No MCP server named {name!r} is connected.")
        return SourceConfig.model_validate(row.config)

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
