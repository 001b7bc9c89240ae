"""teams chats: each Teams person's 1:1 chat with the bot, to post a card from /mcp there

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "teams_chats",
        sa.Column("tenant", sa.String(length=100), nullable=False),
        sa.Column("aad", sa.String(length=100), nullable=False),
        sa.Column("service_url", sa.String(length=500), nullable=False),
        sa.Column("conversation_id", sa.String(length=500), nullable=False),
        sa.Column("bot", sa.String(length=255), nullable=False),
        sa.Column("address", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "aad", name=op.f("pk_teams_chats")),
    )


def downgrade() -> None:
    op.drop_table("teams_chats")
