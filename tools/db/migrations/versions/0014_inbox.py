"""inbox: messages acknowledged and not yet answered, so one whose process died is answered

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inbox",
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("installation", sa.String(length=100), nullable=False),
        sa.Column("message", sa.JSON(), nullable=False),
        sa.Column("holder", sa.String(length=32), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_inbox")),
    )
    with op.batch_alter_table("inbox", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_inbox_answered_at"), ["answered_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("inbox", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inbox_answered_at"))
    op.drop_table("inbox")
