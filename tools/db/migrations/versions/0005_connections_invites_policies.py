"""connections, invites and approval policies: who belongs to a merchant, who countersigns

Revision ID: 0005
Revises: 0004_leases
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004_leases"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "connections",
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("installation", sa.String(length=100), nullable=False),
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("connected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("audit_channel", sa.String(length=100), nullable=True),
        sa.PrimaryKeyConstraint("platform", "installation", name=op.f("pk_connections")),
    )
    with op.batch_alter_table("connections", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_connections_tenant_id"), ["tenant_id"], unique=False)
    op.create_table(
        "invites",
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("used_by", sa.String(length=130), nullable=True),
        sa.PrimaryKeyConstraint("digest", name=op.f("pk_invites")),
    )
    with op.batch_alter_table("invites", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_invites_tenant_id"), ["tenant_id"], unique=False)


    op.create_table(
        "policies",
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("approver_role", sa.String(length=20), nullable=False),
        sa.Column(
            "two_approvers_from",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=True,
        ),
        sa.Column("escalate_after", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("tenant_id", name=op.f("pk_policies")),
    )


def downgrade() -> None:
    op.drop_table("policies")
    with op.batch_alter_table("invites", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_invites_tenant_id"))
    op.drop_table("invites")
    with op.batch_alter_table("connections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_connections_tenant_id"))
    op.drop_table("connections")
