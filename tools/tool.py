"""The shape of a tool: its scope, context, result and proposal; nothing here runs a tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Caller, Role
from tools.cards.record import Issuee
from tools.errors import NeedsApprovalError

__all__ = [
    "PREVIEW",
    "ExecuteFn",
    "Handler",
    "Proposal",
    "ProposalDetail",
    "ProposeFn",
    "Result",
    "Routing",
    "Scope",
    "Tool",
    "ToolContext",
    "refuse_plain_call",
]


@dataclass(frozen=True, slots=True)
class ProposalDetail:
    """One line on the card. Values carry ids AND names: an id alone is unverifiable, a name
    alone is ambiguous."""

    label: str
    value: str


# The label of the detail holding what a server said the write would do, before it ran: a
# decided card shows it as what was approved, or not at all once the result is in.
PREVIEW = "Preview"


@dataclass(frozen=True, slots=True)
class Proposal:
    """A resolved write, waiting on a person.

    Built by a write tool's ``propose``; the registry fills in the card. ``summary`` is one
    sentence written by the tool, never the model: it is what the button agrees to. ``warning``
    is absent when nothing is unusual, because a warning on every card is a warning on none.
    """

    summary: str
    details: tuple[ProposalDetail, ...] = ()
    warning: str | None = None
    # The resolved arguments, sealed into the card by digest. Never shown to the model.
    args: BaseModel | None = field(default=None, repr=False)
    # What the write changes ("request:6", one live card per target), the amount it moves in
    # the merchant's minor units (the policy's two-approver threshold reads it), and how things
    # stand if it is not approved ("request 6 is still pending").
    target: str | None = None
    amount: int | None = None
    standing: str | None = None
    # What the card is about, as a person names it ("Request 4", "Order 12"): the subject of
    # "Request 4's amount is now…" when the card's facts moved before it ran.
    subject: str | None = None
    # What the amount adds up with toward the two-approver threshold, within the policy's
    # window ("branch:1:expense": a branch's expenses); None: the target (an order's refunds).
    tally: str | None = None
    # Whose request this is (the person who raised it): they do not approve it while someone
    # else's role suffices (``tools.people.policy.SelfApproval``).
    raised_by: int | None = None
    # Filled in by the registry: the signed token, its card id and when it stops being valid,
    # who it is issued to, and the live cards of the same target it replaced.
    card: str = field(default="", repr=False)
    card_id: str = ""
    expires_at: datetime | None = None
    routing: Routing | None = None
    replaced: tuple[str, ...] = ()
    # The arguments a person may change on the card before approving (the tool's ``editable``).
    editable: tuple[str, ...] = ()

    def public(self) -> dict[str, Any]:
        """What the model may read of a proposal: the words on the card, no token, no arguments."""
        shown: dict[str, Any] = {
            "summary": self.summary,
            "details": [{"label": d.label, "value": d.value} for d in self.details],
        }
        if self.warning:
            shown["warning"] = self.warning
        if self.expires_at:
            shown["expires_at"] = self.expires_at.isoformat(timespec="minutes")
        if self.routing is not None:
            shown["waiting_for"] = [i.name for i in self.routing.issued_to]
            shown["approvals_needed"] = self.routing.approvals
            if self.routing.kept_asker:
                shown["routed"] = (
                    "You cannot approve this yourself: you raised it (or asked for it), and "
                    "the merchant's policy has someone else approve it. It went to the people "
                    "named in waiting_for, who were told privately."
                )
                shown["not_yours_to_approve"] = True
            elif self.routing.routed:
                shown["routed"] = (
                    f"Your role cannot approve this; it went to the {self.routing.role}s named "
                    "in waiting_for, who were told privately."
                )
        return shown


@dataclass(frozen=True, slots=True)
class Routing:
    """Who a proposal's card is issued to, as the registry decided from the merchant's policy."""

    issued_to: tuple[Issuee, ...]
    approvals: int = 1
    role: str | None = None
    routed: bool = False
    # Who may not approve it although their role would (``tools.people.policy.Route.kept_out``), and
    # whether that left out the asker (their own request, or their own card under "never").
    kept_out: tuple[int, ...] = ()
    kept_asker: bool = False


class Scope(StrEnum):
    READ = "read"
    WRITE = "write"


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a handler gets besides its arguments. The session sees only the caller's tenant."""

    caller: Caller
    session: AsyncSession
    now: datetime
    tenant_name: str = ""
    # The merchant's currency and locale, set where ``session`` cannot be used (an external
    # write's call, made with no database transaction open: ``tools.approving.sending``); "": read them.
    currency: str = ""
    locale: str = ""
    # Set only when executing an approved card: the idempotency key of the write.
    card_id: str | None = None
    # Set only when executing an approved card: everyone who approved it ("Arjun Mehta and
    # Meera Iyer" on a card that needed two), where ``caller`` is only the last of them.
    approved_by: str | None = None

    @property
    def executing(self) -> bool:
        """Whether this runs for an approved card: ``propose`` then re-reads what its card showed
        (``tools.approving.as_shown``) and takes the row locks the write will take, so nothing can move
        between that comparison and the write."""
        return self.card_id is not None


@dataclass(frozen=True, slots=True)
class Result:
    """What a tool returns. ``scope`` says whose rows these are and whether the list is cut short."""

    rows: list[dict[str, Any]]
    count: int
    scope: str
    note: str = ""
    proposal: Proposal | None = field(default=None, repr=False)
    # How a person reads the rows' fields ("requested_by" → "Asked by") and coded values
    # ("kind=stock" → "stock purchase"), as the tool's cards say them: "show request 1" said
    # "Requested by" and "Kind: stock" under a card that said "Asked by" and "stock purchase".
    labels: dict[str, str] = field(default_factory=dict)
    # A merchant's server's own words for its rows ("SUP-001 Nandi Dairy: owed ₹32,140.50"),
    # where it wrote some beside them: how it means its answer to be read.
    text: str = ""

    def for_model(self) -> dict[str, Any]:
        """The result as the model may see it: never the signed card or the resolved arguments."""
        shown: dict[str, Any] = {"scope": self.scope, "count": self.count, "rows": self.rows}
        if self.note:
            shown["note"] = self.note
        if self.labels:
            shown["labels"] = dict(self.labels)
        if self.text:
            shown["text"] = self.text
        return shown


Handler = Callable[[ToolContext, Any], Awaitable[Result]]
ProposeFn = Callable[[ToolContext, Any], Awaitable["Proposal"]]
ExecuteFn = Callable[[ToolContext, Any], Awaitable[Result]]


async def refuse_plain_call(ctx: ToolContext, args: Any) -> Result:
    """The handler of every write tool.

    Unreachable in practice, since ``Registry.call`` diverts writes to ``propose`` first; but a
    write tool whose handler wrote would be a very quiet disaster if that ever stopped being true.
    """
    raise NeedsApprovalError("this tool")


@dataclass(frozen=True, slots=True)
class Tool:
    """A named capability with an argument schema, a scope and the role it needs.

    Build reads directly with a ``handler``; build writes only with ``tools.proposing.write.write_tool``.
    There is no shape of Tool that writes when called.
    """

    name: str
    description: str
    args: type[BaseModel]
    # What doing it is called, for people reading a refusal: "approving a request".
    title: str = ""
    handler: Handler = refuse_plain_call
    role: Role = Role.STAFF
    scope: Scope = Scope.READ
    propose: ProposeFn | None = None
    execute: ExecuteFn | None = None
    # A write whose effect leaves the database transaction (an email, a payment API). After a
    # crash its outcome cannot be known, and the reconciler says so instead of "nothing changed".
    external: bool = False
    # Whether a write may destroy or overwrite what is there (an MCP server's destructiveHint,
    # or known for a reference tool); None: not known, which the MCP spec reads as true.
    destructive: bool | None = None
    # The arguments a person the card is issued to may change before approving (Edit on the
    # card): each one proposes again, re-resolved and re-checked (``tools.proposing.editing``).
    editable: tuple[str, ...] = ()
    # The JSON schema the model reads, when the tool brings its own (an MCP server's input
    # schema says more than the arguments model built from it); None: the model's own schema.
    schema: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        unknown = set(self.editable) - set(self.args.model_fields)
        if unknown:
            raise TypeError(f"tool {self.name} cannot edit unknown arguments {sorted(unknown)}")
        # A read without a handler is allowed only as the base handed to write_tool; the
        # registry refuses to register one.
        if self.scope is Scope.READ:
            if self.propose or self.execute:
                raise TypeError(f"read tool {self.name} cannot have propose or execute")
        elif self.handler is not refuse_plain_call or not (self.propose and self.execute):
            raise TypeError(
                f"write tool {self.name} must be built with write_tool(propose, execute)"
            )
