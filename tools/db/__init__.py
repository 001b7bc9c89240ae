"""Storage: the engine, sessions (tenant-scoped ones too), the engine's tables and migrations."""

from tools.db.base import Base, BigId, TenantScoped, UTCDateTime
from tools.db.database import DEFAULT_URL, Database
from tools.db.tables import (
    AUDIT,
    LEASES,
    PROPOSALS,
    AuditRow,
    ConversationRow,
    LeaseRow,
    ProposalRow,
    ReceiptRow,
)

__all__ = [
    "AUDIT",
    "DEFAULT_URL",
    "LEASES",
    "PROPOSALS",
    "AuditRow",
    "Base",
    "BigId",
    "ConversationRow",
    "Database",
    "LeaseRow",
    "ProposalRow",
    "ReceiptRow",
    "TenantScoped",
    "UTCDateTime",
]
