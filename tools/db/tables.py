"""Countersign's own tables, from cards to chat threads; never a merchant's business data.

- Cards: ``proposals`` (every card and where it is in its life), ``batches`` (several cards of
  one turn under one Approve) and ``audit_log`` (append-only).
- Conversations: ``conversations`` (a chat thread's model history), ``turn_holds`` (the one
  turn running in a thread), ``receipts`` (inbound events already taken), ``inbox`` (messages
  acknowledged and not answered yet) and ``teams_chats`` (a Teams person's 1:1 chat).
- Merchants' settings: ``connections`` (which merchant a chat installation belongs to),
  ``invites`` (one-time install codes), ``policies`` (who may countersign, and when two must),
  ``mcp_sources`` (their MCP servers) and ``mcp_tokens`` (tokens for our ``/mcp`` endpoint).
- Processes: ``process_leases`` (who may be executing a card, and when it last said so).

Merchants and their people are in ``tools.people.tables``; the demo merchant's data in
``tools.toolsets.merchant.models``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import JSON, Boolean, Float, Index, Integer, String, Table, Text, false, text
from sqlalchemy.orm import Mapped, mapped_column

from tools.db.base import Base, BigId, UTCDateTime

__all__ = [
    "AUDIT",
    "BATCHES",
    "INBOX",
    "LEASES",
    "MCP_TOKENS",
    "PROPOSALS",
    "AuditRow",
    "BatchRow",
    "ConnectionRow",
    "ConversationRow",
    "InboxRow",
    "InviteRow",
    "LeaseRow",
    "McpSourceRow",
    "McpTokenRow",
    "PolicyRow",
    "ProposalRow",
    "ReceiptRow",
    "TeamsChatRow",
    "TurnHoldRow",
]


_LIVE = "status = 'pending' AND target IS NOT NULL"


class ProposalRow(Base):
    """One card: what it runs, for whom, and where it is in its life.

    ``pending → executing → done | failed``, ``pending → rejected | expired | withdrawn |
    superseded``, ``executing → interrupted | outcome_unknown`` (the process stopped mid-write).
    """

    __tablename__ = "proposals"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tool: Mapped[str] = mapped_column(String(100))
    agent: Mapped[str] = mapped_column(String(100))
    user_id: Mapped[int] = mapped_column(Integer, index=True)
    tenant_id: Mapped[int] = mapped_column(Integer)
    args: Mapped[dict[str, Any]] = mapped_column(JSON)
    digest: Mapped[str] = mapped_column(String(64))
    summary: Mapped[str] = mapped_column(Text)
    details: Mapped[list[dict[str, str]]] = mapped_column(JSON)
    warning: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    decided_by: Mapped[int | None] = mapped_column(Integer)
    decided_by_name: Mapped[str | None] = mapped_column(String(200))
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    reason: Mapped[str | None] = mapped_column(Text)
    outcome: Mapped[str | None] = mapped_column(Text)
    # The process (``LeaseRow.holder``) that claimed the card and is executing it; the
    # reconciler settles an ``executing`` card only once that process is gone.
    holder: Mapped[str | None] = mapped_column(String(32))
    # Where a surface posted the card (platform, channel, message id), so any process can
    # update it later. Opaque to the engine; records call it ``posting``. The column keeps its
    # name: renaming it would break the processes still running during a rolling deploy.
    surface: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Who may approve it ([{"userid", "name"}]; NULL: its asker alone, as before routing), the
    # approvals so far ([{"userid", "name", "at"}]) and how many it needs. ``approved_count``
    # is what a concurrent approval's conditional UPDATE compares.
    issued_to: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    approvals: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    approvals_needed: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    approved_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    needed_role: Mapped[str | None] = mapped_column(String(20))
    # Issued to people other than its asker (the asker's role was not enough).
    routed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # What the write changes ("request:6"): one live card per target and tenant.
    target: Mapped[str | None] = mapped_column(String(200))
    # How things stand if the card is not approved ("request 6 is still pending").
    standing: Mapped[str | None] = mapped_column(Text)
    escalated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    replaced_by: Mapped[str | None] = mapped_column(String(32))
    # The batch it is shown in (``BatchRow``), when one turn proposed it with others.
    batch_id: Mapped[str | None] = mapped_column(String(32), index=True)
    # When its decision was shown: every copy updated and the channel's audit line posted
    # (NULL on a decided card: not yet, and the sweep redraws it). ``showing_by`` is the process
    # (``LeaseRow.holder``) that took the showing at ``showing_at``; another process takes it
    # over only once that one is gone (``tools.keeping.showing``).
    shown_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    showing_by: Mapped[str | None] = mapped_column(String(32))
    showing_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # What the write moves in the merchant's minor units, and what it adds up with toward the
    # two-approver amount ("order:12:refund", "branch:1:expense"); see ``tools.people.routing``.
    amount: Mapped[int | None] = mapped_column(BigId)
    tally: Mapped[str | None] = mapped_column(String(200))
    # People who may not approve it although their role would (who raised the request): the
    # self-approval rule, kept with the card so an escalation cannot add them back.
    kept_out: Mapped[list[int] | None] = mapped_column(JSON)

    __table_args__ = (
        Index("ix_proposals_tenant_status", "tenant_id", "status"),
        # What moved on one tally is read on every proposal that has an amount.
        Index("ix_proposals_tally", "tenant_id", "tally"),
        # One live card per target (see ``tools.people.routing.replace_live``).
        Index(
            "ux_proposals_live_target",
            "tenant_id",
            "target",
            unique=True,
            postgresql_where=text(_LIVE),
            sqlite_where=text(_LIVE),
        ),
        # The sweep looks for ``executing`` cards every few seconds in every process.
        Index("ix_proposals_status", "status"),
    )


class BatchRow(Base):
    """Several cards of one turn shown as one card, with one Approve (``tools.batches.grouping``).

    Each item stays its own row in ``proposals`` (own arguments, digest, status, audit lines);
    this row is what the batch's one signed token names, and where its message was posted.
    ``digest`` covers the items and their own digests, so no card joins a batch after its
    token was minted.
    """

    __tablename__ = "batches"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[int] = mapped_column(Integer, index=True)
    user_id: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    digest: Mapped[str] = mapped_column(String(64))
    # Its cards' ids in the order they were proposed (the order the card lists them).
    items: Mapped[list[str]] = mapped_column(JSON)
    surface: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class AuditRow(Base):
    """One audited event. Rows are only ever inserted; the migration forbids UPDATE and DELETE."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)
    agent: Mapped[str] = mapped_column(String(100))
    tool: Mapped[str] = mapped_column(String(100))
    user_id: Mapped[int | None] = mapped_column(Integer)
    tenant_id: Mapped[int | None] = mapped_column(Integer, index=True)
    scope: Mapped[str] = mapped_column(String(10))
    outcome: Mapped[str] = mapped_column(String(20))
    detail: Mapped[str] = mapped_column(Text, default="")
    rows: Mapped[int] = mapped_column(Integer, default=0)
    took_ms: Mapped[float] = mapped_column(Float, default=0.0)
    args: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    card_id: Mapped[str | None] = mapped_column(String(32), index=True)


class ConversationRow(Base):
    """A surface's conversation (one chat thread): the model's message history as JSON.

    ``version`` increases on every save, so two turns racing on one thread cannot both write
    a history that forgets the other's messages (the loser reloads and retries).
    """

    __tablename__ = "conversations"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    tenant_id: Mapped[int | None] = mapped_column(Integer, index=True)
    messages: Mapped[str] = mapped_column(Text, default="[]")
    version: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class TurnHoldRow(Base):
    """A conversation whose turn is running now, and which process runs it.

    Inserting the row takes the conversation's turn and deleting it hands it on, so across
    processes one thread's turns run one at a time (``bot.runtime.turn_order``). ``turn`` names the
    turn, ``holder`` its process's lease (``process_leases``), which tells whether it still runs.
    """

    __tablename__ = "turn_holds"

    conversation: Mapped[str] = mapped_column(String(255), primary_key=True)
    turn: Mapped[str] = mapped_column(String(32))
    holder: Mapped[str] = mapped_column(String(32))
    since: Mapped[datetime] = mapped_column(UTCDateTime)


class ReceiptRow(Base):
    """An inbound event a surface has already taken (an event id, a channel+ts): dedupe keys.

    Inserting the key is the claim; a second insert of the same key fails, so a retried or
    doubly delivered event is answered once, across every process sharing the database.
    """

    __tablename__ = "receipts"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)


class TeamsChatRow(Base):
    """A Teams person's 1:1 chat with the bot, as a token-checked activity from it told it.

    What continuing that chat needs (its service URL, the chat's id, the bot's id in it) and
    who the person is there (their ``29:`` address and name), keyed by the Entra tenant and
    their AAD object id: a card asked for outside any conversation (at ``/mcp``) is posted
    there. Teams opens no chat without a service URL it gave this process.
    """

    __tablename__ = "teams_chats"

    tenant: Mapped[str] = mapped_column(String(100), primary_key=True)
    aad: Mapped[str] = mapped_column(String(100), primary_key=True)
    service_url: Mapped[str] = mapped_column(String(500))
    conversation_id: Mapped[str] = mapped_column(String(500))
    bot: Mapped[str] = mapped_column(String(255))
    address: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255), default="")
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class InboxRow(Base):
    """A message a surface acknowledged and has still to answer, kept from before the ack.

    A process killed after its ack and before its answer left the message unanswered for good:
    Slack does not send an acknowledged event again. ``holder`` is the process answering it
    (the one that took it in, then the one whose turn claimed it), ``started_at`` when a turn
    claimed it, ``answered_at`` when its answer went out; a row whose holder is gone unanswered
    is answered by another process (``bot.runtime.inbox``).
    """

    __tablename__ = "inbox"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    installation: Mapped[str] = mapped_column(String(100))
    # What the surface needs to answer it again: who, where, what was said.
    message: Mapped[dict[str, Any]] = mapped_column(JSON)
    holder: Mapped[str] = mapped_column(String(32))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime, index=True)


class ConnectionRow(Base):
    """A chat installation a merchant connected: a Slack workspace or org, an Entra tenant.

    Nothing else makes an installation belong to a merchant: not an email domain, not a first
    message. One installation belongs to at most one merchant.
    """

    __tablename__ = "connections"

    platform: Mapped[str] = mapped_column(String(20), primary_key=True)
    installation: Mapped[str] = mapped_column(String(100), primary_key=True)
    tenant_id: Mapped[int] = mapped_column(Integer, index=True)
    connected_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Where this installation's decisions are recorded for the channel to see (a Slack channel
    # id); decisions made in a DM are posted there too.
    audit_channel: Mapped[str | None] = mapped_column(String(100))


class InviteRow(Base):
    """A one-time code an owner hands to whoever installs the app, to connect that install.

    Only the code's SHA-256 is kept: a copy of the database does not hold usable codes.
    """

    __tablename__ = "invites"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[int] = mapped_column(Integer, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    used_by: Mapped[str | None] = mapped_column(String(130))


class PolicyRow(Base):
    """A merchant's approval policy: who may countersign its writes, and when two must.

    A merchant without a row has the default policy: the tool's own role, one approver.
    """

    __tablename__ = "policies"

    tenant_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    approver_role: Mapped[str] = mapped_column(String(20), default="staff")
    two_approvers_from: Mapped[int | None] = mapped_column(BigId)
    escalate_after: Mapped[int | None] = mapped_column(Integer)
    # ``tools.people.policy.SelfApproval``; NULL: the default, not-own-requests.
    self_approval: Mapped[str | None] = mapped_column(String(20))
    # Seconds back that what the same thing moved counts toward the amount; NULL: a day.
    two_approvers_window: Mapped[int | None] = mapped_column(Integer)


class McpSourceRow(Base):
    """One MCP server a merchant connected: its ``tools.toolsets.mcp.config.SourceConfig`` as JSON.

    Header values written ``$VAR`` are stored as written; the secret itself never is.
    """

    __tablename__ = "mcp_sources"

    tenant_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(20), primary_key=True)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    added_at: Mapped[datetime] = mapped_column(UTCDateTime)
    changed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Each tool the owner accepted, with what its annotations said then ("read" / "write");
    # NULL until first listed (``tools.toolsets.mcp.store``). SQL NULL, never JSON null, for None.
    reviewed: Mapped[dict[str, str] | None] = mapped_column(JSON(none_as_null=True))
    # The tools the owner was told of as new, with what the server said of each then.
    told: Mapped[dict[str, str] | None] = mapped_column(JSON(none_as_null=True))


class McpTokenRow(Base):
    """A personal token an agent sends to Countersign's ``/mcp`` endpoint: it means one person.

    Only the token's SHA-256 is kept, so a copy of the database holds no usable token; the
    ``prefix`` (8 characters of the secret) is what lists show to tell tokens apart. Revoking
    sets ``revoked_at``; the row stays for the audit.
    """

    __tablename__ = "mcp_tokens"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[int] = mapped_column(Integer, index=True)
    # The person the token means (``tools.people.tables.Person``); their live role decides what it sees.
    person_id: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(100))
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(8))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class LeaseRow(Base):
    """A running process that may be executing cards, and when it last said it was alive.

    A process is gone when it has stopped (``stopped_at``) or its heartbeat is older than the
    reconcile grace period; only then are the cards it claimed settled. ``pid_space`` and ``pid``
    let a process on the same machine tell at once that another one has died.
    """

    __tablename__ = "process_leases"

    holder: Mapped[str] = mapped_column(String(32), primary_key=True)
    pid_space: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    beat_at: Mapped[datetime] = mapped_column(UTCDateTime)
    stopped_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


# The tables themselves, for Core statements on the approval path (see ``tools.cards.store``).
PROPOSALS = cast("Table", ProposalRow.__table__)
AUDIT = cast("Table", AuditRow.__table__)
BATCHES = cast("Table", BatchRow.__table__)
LEASES = cast("Table", LeaseRow.__table__)
INBOX = cast("Table", InboxRow.__table__)
MCP_TOKENS = cast("Table", McpTokenRow.__table__)
