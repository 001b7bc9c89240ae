"""The migration recording when decisions were shown leaves past decisions alone."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from tools.db import Database
from tools.db.migrate import upgrade_async

_CARD = (
    "INSERT INTO proposals (id, tool, agent, user_id, tenant_id, args, digest, summary, details,"
    " status, created_at, expires_at, decided_at, approvals_needed, approved_count, routed)"
    " VALUES (:id, 't', 'a', 1, 1, '{}', 'd', 's', '[]', :status,"
    " '2026-11-30 12:00:00', '2026-11-30 12:30:00', :decided, 1, 0, false)"
)


async def test_cards_decided_before_the_upgrade_count_as_shown(tmp_path: Path) -> None:
    """Without it, the first sweep after the upgrade redrew every card ever decided and posted
    each decision's audit line again; a card still waiting stays unshown."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    await upgrade_async(url, "0008")
    db = Database(url)
    try:
        async with db.engine.begin() as conn:
            await conn.execute(
                text(_CARD), {"id": "old", "status": "done", "decided": "2026-11-30 12:05:00"}
            )
            await conn.execute(text(_CARD), {"id": "live", "status": "pending", "decided": None})
        await upgrade_async(url, "head")
        async with db.engine.connect() as conn:
            found = await conn.execute(text("SELECT id, shown_at FROM proposals"))
            rows = {row.id: row.shown_at for row in found}
    finally:
        await db.dispose()
    assert rows["old"] is not None and str(rows["old"]).startswith("2026-11-30 12:05:00")
    assert rows["live"] is None
