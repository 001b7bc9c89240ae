"""Storage: the engine, sessions (tenant-scoped ones too), the engine's tables and migrations."""

from tools.db.base import Base, BigId, TenantScoped, UTCDateTime
from tools.db.database import DEFAULT_URL, Database
from tools.db.tables import (
    AuditRow,
    ConnectionRow,
    ConversationRow,
    InviteRow,
    PolicyRow,
    ProposalRow,
    ReceiptRow,
)

__all__ = [
    "DEFAULT_URL",
    "AuditRow",
    "Base",
    "BigId",
    "ConnectionRow",
    "ConversationRow",
    "Database",
    "InviteRow",
    "PolicyRow",
    "ProposalRow",
    "ReceiptRow",
    "TenantScoped",
    "UTCDateTime",
]
