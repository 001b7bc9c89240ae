"""merchant time zone: the IANA zone whose days "today" and "this week" are

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The demo merchants' cities' zones, for a demo database loaded before this revision.
_DEMO_ZONES = (("Fiesta Foods", "Asia/Kolkata"), ("Harbor Books", "America/New_York"))


def upgrade() -> None:
    with op.batch_alter_table("tenants", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("time_zone", sa.String(length=64), nullable=False, server_default="UTC")
        )
    tenants = sa.table("tenants", sa.column("name", sa.String), sa.column("time_zone", sa.String))
    for name, zone in _DEMO_ZONES:
        op.execute(tenants.update().where(tenants.c.name == name).values(time_zone=zone))


def downgrade() -> None:
    with op.batch_alter_table("tenants", schema=None) as batch_op:
        batch_op.drop_column("time_zone")
