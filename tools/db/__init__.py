"""Storage: the engine, sessions (tenant-scoped ones too), the engine's tables and migrations."""

from tools.db import compiled
from tools.db.base import Base, BigId, TenantScoped, UTCDateTime
from tools.db.database import DEFAULT_URL, Database
from tools.db.tables import (
    AUDIT,
    BATCHES,
    LEASES,
    MCP_TOKENS,
    PROPOSALS,
    AuditRow,
    BatchRow,
    ConnectionRow,
    ConversationRow,
    InviteRow,
    LeaseRow,
    McpSourceRow,
    McpTokenRow,
    PolicyRow,
    ProposalRow,
    ReceiptRow,
    TeamsChatRow,
    TurnHoldRow,
)

__all__ = [
    "AUDIT",
    "BATCHES",
    "DEFAULT_URL",
    "LEASES",
    "MCP_TOKENS",
    "PROPOSALS",
    "AuditRow",
    "Base",
    "BatchRow",
    "BigId",
    "ConnectionRow",
    "ConversationRow",
    "Database",
    "InviteRow",
    "LeaseRow",
    "McpSourceRow",
    "McpTokenRow",
    "PolicyRow",
    "ProposalRow",
    "ReceiptRow",
    "TeamsChatRow",
    "TenantScoped",
    "TurnHoldRow",
    "UTCDateTime",
    "compiled",
]
