"""The engine: tools, the registry that runs them, approval cards and the audit log.

Knows nothing about Slack, Teams or language models: surfaces call ``Registry.call`` for the
model's tool calls and ``Registry.approve`` / ``Registry.reject`` for a person's button press.
``__all__`` is what the bot may import of the engine, besides ``tools.errors`` and the tables of
``tools.db`` (an import-linter contract holds it to that): the registry is its one door, the
rest are the values that pass through it and the stores of the bot's own rows.

Its folders, each importing only those below it: ``toolsets`` (the tools a merchant's catalogue
offers) on ``registry``, then ``keeping`` (cards between proposal and after decision),
``batches`` and ``proposing``, ``approving``, the ``deps`` every step shares, ``people`` and
``catalogue``, the shape of a ``tool`` and its ``schema``, ``cards`` and ``audit``, and at the
bottom the errors, times, caller, agent and database.
"""

from tools.agent import Agent
from tools.approving.approval import Decision
from tools.audit.feedback import FEEDBACK, Feedback, FeedbackLog
from tools.audit.log import AuditEntry, AuditLog, Outcome
from tools.batches.deciding import BatchDecision, ItemOutcome
from tools.batches.grouping import MAX_ITEMS, Batch, BatchRecord
from tools.caller import Caller, Role
from tools.cards.lease import LeaseState, ProcessLease
from tools.cards.record import CardRecord, CardStatus, Issuee
from tools.cards.store import DECIDED, CardStore
from tools.cards.tokens import (
    CARD_TTL,
    BatchClaims,
    CardClaims,
    CardSigner,
    Clock,
    is_batch_token,
    utcnow,
)
from tools.cards.visible import MARKED, hides, marked, one_line, too_long
from tools.keeping.door import Covers, PostingChange
from tools.people.connections import Connection, Connections, Platform
from tools.people.consents import CONSENT_TTL, Consent, Consents, ConsentSigner, Pressed
from tools.people.directory import Directory, identify_on
from tools.people.grants import ACCESS_TTL, Grant, Grants, Issued
from tools.people.mcp_tokens import TOKEN_PREFIX, Bearer, McpToken, McpTokens
from tools.people.policy import Policies, Policy, SelfApproval
from tools.proposing.write import NOT_DONE_NOTE, write_tool
from tools.registry import ALL_TOOLS, Registry
from tools.schema import Args, json_schema
from tools.times import engine_time, find_times, in_zone, time_of, time_stamp, zone_of
from tools.tool import PREVIEW, Proposal, ProposalDetail, Result, Routing, Scope, Tool, ToolContext

__all__ = [
    "ACCESS_TTL",
    "ALL_TOOLS",
    "CARD_TTL",
    "CONSENT_TTL",
    "DECIDED",
    "FEEDBACK",
    "MARKED",
    "MAX_ITEMS",
    "NOT_DONE_NOTE",
    "PREVIEW",
    "TOKEN_PREFIX",
    "Agent",
    "Args",
    "AuditEntry",
    "AuditLog",
    "Batch",
    "BatchClaims",
    "BatchDecision",
    "BatchRecord",
    "Bearer",
    "Caller",
    "CardClaims",
    "CardRecord",
    "CardSigner",
    "CardStatus",
    "CardStore",
    "Clock",
    "Connection",
    "Connections",
    "Consent",
    "ConsentSigner",
    "Consents",
    "Covers",
    "Decision",
    "Directory",
    "Feedback",
    "FeedbackLog",
    "Grant",
    "Grants",
    "Issued",
    "Issuee",
    "ItemOutcome",
    "LeaseState",
    "McpToken",
    "McpTokens",
    "Outcome",
    "Platform",
    "Policies",
    "Policy",
    "PostingChange",
    "Pressed",
    "ProcessLease",
    "Proposal",
    "ProposalDetail",
    "Registry",
    "Result",
    "Role",
    "Routing",
    "Scope",
    "SelfApproval",
    "Tool",
    "ToolContext",
    "engine_time",
    "find_times",
    "hides",
    "identify_on",
    "in_zone",
    "is_batch_token",
    "json_schema",
    "marked",
    "one_line",
    "time_of",
    "time_stamp",
    "too_long",
    "utcnow",
    "write_tool",
    "zone_of",
]
