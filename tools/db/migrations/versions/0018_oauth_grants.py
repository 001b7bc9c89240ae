"""oauth grants: agents connected by OAuth at /mcp, each grant countersigned by its person; hashes only

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _at(name: str, *, nullable: bool = True) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.String(length=64), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        _at("registered_at", nullable=False),
        sa.PrimaryKeyConstraint("client_id", name=op.f("pk_oauth_clients")),
    )
    op.create_table(
        "oauth_consents",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("client_id", sa.String(length=2000), nullable=False),
        sa.Column("client_name", sa.String(length=100), nullable=False),
        sa.Column("redirect_uri", sa.String(length=2000), nullable=False),
        sa.Column("state", sa.String(length=2000), nullable=True),
        sa.Column("code_challenge", sa.String(length=128), nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        _at("created_at", nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("short_code", sa.String(length=16), nullable=True),
        sa.Column("tenant_id", sa.Integer(), nullable=True),
        sa.Column("person_id", sa.Integer(), nullable=True),
        _at("asked_at"),
        sa.Column("browser", sa.String(length=64), nullable=True),
        _at("decided_at"),
        sa.Column("code_hash", sa.String(length=64), nullable=True),
        _at("code_used_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_consents")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_oauth_consents_code_hash")),
    )
    op.create_table(
        "oauth_grants",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("person_id", sa.Integer(), nullable=False),
        sa.Column("client_id", sa.String(length=2000), nullable=False),
        sa.Column("client_name", sa.String(length=100), nullable=False),
        sa.Column("resource", sa.String(length=2000), nullable=False),
        sa.Column("consent_id", sa.String(length=64), nullable=False),
        _at("created_at", nullable=False),
        _at("revoked_at"),
        _at("last_used_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_oauth_grants")),
    )
    with op.batch_alter_table("oauth_grants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_grants_tenant_id"), ["tenant_id"], unique=False)
    op.create_table(
        "oauth_tokens",
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("grant_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        _at("created_at", nullable=False),
        _at("expires_at", nullable=False),
        _at("used_at"),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["oauth_grants.id"],
            name=op.f("fk_oauth_tokens_grant_id_oauth_grants"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("hash", name=op.f("pk_oauth_tokens")),
    )
    with op.batch_alter_table("oauth_tokens", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_oauth_tokens_grant_id"), ["grant_id"], unique=False)


def downgrade() -> None:
    op.drop_table("oauth_tokens")
    op.drop_table("oauth_grants")
    op.drop_table("oauth_consents")
    op.drop_table("oauth_clients")
