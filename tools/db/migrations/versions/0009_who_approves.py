"""who approves: what a card moves and adds up with, who it keeps out; the policy's window and
self-approval rule

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIG = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    # Cards stored before this revision have no amount or tally: they add nothing to what a
    # later card counts, and keep nobody out beyond those they were issued to.
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("amount", _BIG, nullable=True))
        batch_op.add_column(sa.Column("tally", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("kept_out", sa.JSON(), nullable=True))
    op.create_index("ix_proposals_tally", "proposals", ["tenant_id", "tally"])
    # NULL reads as the defaults: a day's window, and nobody approving a request they raised.
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.add_column(sa.Column("self_approval", sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column("two_approvers_window", sa.Integer(), nullable=True))


def downgrade() -> None:
    # The code before this revision would issue a card it kept someone out of back to them:
    # end those still waiting as expired (nothing ran).
    op.execute("UPDATE proposals SET status = 'expired' WHERE status = 'pending' AND kept_out IS NOT NULL")
    with op.batch_alter_table("policies", schema=None) as batch_op:
        batch_op.drop_column("two_approvers_window")
        batch_op.drop_column("self_approval")
    op.drop_index("ix_proposals_tally", table_name="proposals")
    with op.batch_alter_table("proposals", schema=None) as batch_op:
        batch_op.drop_column("kept_out")
        batch_op.drop_column("tally")
        batch_op.drop_column("amount")
