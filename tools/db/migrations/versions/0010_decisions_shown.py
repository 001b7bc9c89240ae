"""decisions shown: when a decided card's copies and audit line went out, and who shows it

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("shown_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("showing_by", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("showing_at", sa.DateTime(timezone=True), nullable=True))
    # Cards decided before this revision were shown by the code of their day, or never will
    # be: without this the first sweep after the upgrade redrew every card ever decided and
    # posted each decision's audit line a second time.
    op.execute(
        "UPDATE proposals SET shown_at = COALESCE(decided_at, created_at) "
        "WHERE status NOT IN ('pending', 'executing')"
    )


def downgrade() -> None:
    # The code before this revision does not redraw a decision that was never shown.
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.drop_column("showing_at")
        batch_op.drop_column("showing_by")
        batch_op.drop_column("shown_at")
