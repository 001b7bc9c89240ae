"""batches: several cards of one turn shown as one card with one Approve

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "batches",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("items", sa.JSON(), nullable=False),
        sa.Column("surface", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batches")),
    )
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_batches_tenant_id"), ["tenant_id"], unique=False)
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("batch_id", sa.String(length=32), nullable=True))
        batch_op.create_index(batch_op.f("ix_proposals_batch_id"), ["batch_id"], unique=False)


def downgrade() -> None:
    # The code before this revision shows a bundled item as a card of its own, whose message
    # it has no placement for and whose token was never shown: end the live ones as expired
    # (nothing ran), so nobody waits on a card that no button can reach.
    op.execute(
        "UPDATE proposals SET status = 'expired' "
        "WHERE batch_id IS NOT NULL AND status = 'pending'"
    )
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_proposals_batch_id"))
        batch_op.drop_column("batch_id")
    with op.batch_alter_table("batches", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_batches_tenant_id"))
    op.drop_table("batches")
