"""Makes the audit log append-only in the database itself.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MESSAGE = "audit_log is append-only"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$ "
            f"BEGIN RAISE EXCEPTION '{_MESSAGE}'; END $$ LANGUAGE plpgsql"
        )
        op.execute(
            "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
        )
        return
    for verb in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER audit_log_no_{verb.lower()} BEFORE {verb} ON audit_log "
            f"BEGIN SELECT RAISE(ABORT, '{_MESSAGE}'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_log_append_only ON audit_log")
        op.execute("DROP FUNCTION audit_log_append_only()")
        return
    for verb in ("update", "delete"):
        op.execute(f"DROP TRIGGER audit_log_no_{verb}")
