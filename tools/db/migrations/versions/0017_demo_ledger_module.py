"""demo ledger module: the demo ledger's source starts ``python -m ledger``

The demo supplier ledger is a package of its own, no longer inside the engine's. A source
connected by ``countersign demo`` before this revision starts it by its old module name and
would fail to start; its arguments are moved to the new name, its database file kept.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Written in parts so that a rename of the engine's modules never rewrites the old name here.
_OLD = ".".join(("tools", "ledger"))
_NEW = "ledger"

_SOURCES = sa.table(
    "mcp_sources",
    sa.column("tenant_id", sa.Integer),
    sa.column("name", sa.String),
    sa.column("config", sa.JSON),
)


def _moved(config: dict[str, Any], old: str, new: str) -> dict[str, Any] | None:
    """The config starting module ``new`` where it started ``old``; None if it did not."""
    args = list(config.get("args") or ())
    at = next((i for i in range(len(args) - 1) if args[i] == "-m" and args[i + 1] == old), None)
    if at is None:
        return None
    args[at + 1] = new
    return {**config, "args": args}


def _rename(old: str, new: str) -> None:
    conn = op.get_bind()
    for row in conn.execute(sa.select(_SOURCES)).all():
        config = _moved(row.config or {}, old, new)
        if config is not None:
            conn.execute(
                _SOURCES.update()
                .where(_SOURCES.c.tenant_id == row.tenant_id, _SOURCES.c.name == row.name)
                .values(config=config)
            )


def upgrade() -> None:
    _rename(_OLD, _NEW)


def downgrade() -> None:
    _rename(_NEW, _OLD)
