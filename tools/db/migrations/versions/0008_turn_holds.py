"""turn_holds: the conversations whose turn is running now, so processes take turns in a thread

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "turn_holds",
        sa.Column("conversation", sa.String(length=255), nullable=False),
        sa.Column("turn", sa.String(length=32), nullable=False),
        sa.Column("holder", sa.String(length=32), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("conversation", name=op.f("pk_turn_holds")),
    )


def downgrade() -> None:
    # A hold lasts one turn: the code before this revision orders turns within a process only.
    op.drop_table("turn_holds")
