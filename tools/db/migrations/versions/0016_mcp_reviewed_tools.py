"""mcp reviewed tools: which of a source's tools the owner accepted, and which they were told of

``reviewed`` holds each tool the owner accepted (connecting the source, or ``countersign mcp
review``) with what the server's annotations said of it then, ``read`` or ``write``; NULL until
the source is first listed, when the tools found are the ones connected. ``told`` holds the
tools the owner was told of as new, with what the server said of them when told.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Sources connected before this revision keep NULL: their next listing becomes what the
    # owner accepted, so nothing they already offered turns into a write overnight.
    with op.batch_alter_table("mcp_sources") as table:
        table.add_column(sa.Column("reviewed", sa.JSON(), nullable=True))
        table.add_column(sa.Column("told", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("mcp_sources") as table:
        table.drop_column("told")
        table.drop_column("reviewed")
