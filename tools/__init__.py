"""The engine: tools, the registry that runs them, approval cards and the audit log.

Knows nothing about Slack, Teams or language models: surfaces call ``Registry.call`` for the
model's tool calls and ``Registry.approve`` / ``Registry.reject`` for a person's button press.
"""

from tools.agent import Agent
from tools.approval import Decision
from tools.audit import AuditEntry, AuditLog, Outcome
from tools.caller import Caller, Role
from tools.card_record import CardRecord, CardStatus
from tools.card_store import CardStore
from tools.proposing import NOT_DONE_NOTE, write_tool
from tools.reconcile import reconcile
from tools.registry import Registry
from tools.schema import Args
from tools.tokens import CARD_TTL, CardClaims, CardSigner
from tools.tool import Proposal, ProposalDetail, Result, Scope, Tool, ToolContext

__all__ = [
    "CARD_TTL",
    "NOT_DONE_NOTE",
    "Agent",
    "Args",
    "AuditEntry",
    "AuditLog",
    "Caller",
    "CardClaims",
    "CardRecord",
    "CardSigner",
    "CardStatus",
    "CardStore",
    "Decision",
    "Outcome",
    "Proposal",
    "ProposalDetail",
    "Registry",
    "Result",
    "Role",
    "Scope",
    "Tool",
    "ToolContext",
    "reconcile",
    "write_tool",
]
