"""claim holders and process leases: settle a card only once the process executing it is gone

Revision ID: 0004_leases
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_leases"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "process_leases",
        sa.Column("holder", sa.String(length=32), nullable=False),
        sa.Column("pid_space", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("holder", name=op.f("pk_process_leases")),
    )
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        # Cards claimed before this migration have no holder; the reconciler treats them as
        # claimed by an unknown process and waits out the grace period.
        batch_op.add_column(sa.Column("holder", sa.String(length=32), nullable=True))
        batch_op.create_index("ix_proposals_status", ["status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.drop_index("ix_proposals_status")
        batch_op.drop_column("holder")
    op.drop_table("process_leases")
