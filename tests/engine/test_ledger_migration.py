"""The migration that follows the demo ledger to its own package keeps a demo source starting."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import text

from tools.db import Database
from tools.db.migrate import upgrade_async

_SOURCE = (
    "INSERT INTO mcp_sources (tenant_id, name, config, added_at, changed_at)"
    " VALUES (1, :name, :config, '2026-12-01 09:00:00', '2026-12-01 09:00:00')"
)
_OLD_MODULE = ".".join(("tools", "ledger"))


async def test_a_demo_source_connected_before_the_move_starts_the_ledger_again(
    tmp_path: Path,
) -> None:
    """A countersign.db from before the move started `python -m <old module>`, which no longer
    exists, so the demo's ledger failed to start; its source now names `ledger`, its file kept,
    and a source of the merchant's own is untouched."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    await upgrade_async(url, "0016")
    demo = {"name": "ledger", "command": "python", "args": ["-m", _OLD_MODULE, "--db", "l.db"]}
    own = {"name": "erp", "command": "python", "args": ["-m", "erp.server", _OLD_MODULE]}
    db = Database(url)
    try:
        async with db.engine.begin() as conn:
            for config in (demo, own):
                await conn.execute(
                    text(_SOURCE), {"name": config["name"], "config": json.dumps(config)}
                )
        await upgrade_async(url, "head")
        async with db.engine.connect() as conn:
            found = await conn.execute(text("SELECT name, config FROM mcp_sources"))
            configs = {row.name: json.loads(row.config) for row in found}
    finally:
        await db.dispose()
    assert configs["ledger"]["args"] == ["-m", "ledger", "--db", "l.db"]
    assert configs["erp"] == own
