"""card routing: who a card is issued to, its approvals, its target, its escalation

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIVE = "status = 'pending' AND target IS NOT NULL"


def upgrade() -> None:
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        # Cards stored before routing have none of these: they were issued to their asker
        # alone and needed one approval, which is what the defaults (and NULLs) read as.
        batch_op.add_column(sa.Column("issued_to", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("approvals", sa.JSON(), nullable=True))
        batch_op.add_column(
            sa.Column("approvals_needed", sa.Integer(), nullable=False, server_default="1")
        )
        batch_op.add_column(
            sa.Column("approved_count", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("needed_role", sa.String(length=20), nullable=True))
        batch_op.add_column(
            sa.Column("routed", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("target", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("standing", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("escalated_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("replaced_by", sa.String(length=32), nullable=True))
    # One live card per target, kept by the database itself: two proposals for the same
    # request racing on PostgreSQL would otherwise both find no live card and both insert.
    op.create_index(
        "ux_proposals_live_target",
        "proposals",
        ["tenant_id", "target"],
        unique=True,
        postgresql_where=sa.text(_LIVE),
        sqlite_where=sa.text(_LIVE),
    )


def downgrade() -> None:
    # The code before this revision knows neither status and would give a routed or
    # two-approver card to its asker alone: end them all as expired (nothing ran).
    op.execute(
        "UPDATE proposals SET status = 'expired' WHERE status IN ('withdrawn', 'superseded') "
        "OR (status = 'pending' AND (routed OR approvals_needed > 1))"
    )
    op.drop_index("ux_proposals_live_target", table_name="proposals")
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        for column in (
            "replaced_by",
            "escalated_at",
            "standing",
            "target",
            "routed",
            "needed_role",
            "approved_count",
            "approvals_needed",
            "approvals",
            "issued_to",
        ):
            batch_op.drop_column(column)
