"""Who may countersign a merchant's writes: the merchant's policy, stored as data; never per tool.

The seed binds a card to the person who asked: the human countersigns what the model proposed.
A merchant adds its own rules about *which* human. A write's own role requirement stays with the
tool; the policy can only raise it (every write needs a manager) and ask for a second approver
from an amount on. ``route`` turns the policy, the asker and the merchant's people into the set
of people a card is issued to; the server decides it, never the model or the presser.

Two rules keep one person from countersigning alone what the policy gives to two:

- Separation of duties (``SelfApproval``): nobody counts as an approver of a request they
  raised (the proposal names who raised it) while someone else's role suffices; a merchant may
  tighten it to "never one's own card" or loosen it to "allowed". A person alone still
  approves their own: there is nobody else.
- The two-approver amount counts what the same thing already moved within the policy's window
  (``two_approvers_window``): ₹30,000 asked as ₹20,000 and then ₹10,000 on one order needs two
  approvers the second time. ``tools.people.routing`` reads what moved from the cards themselves.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from sqlalchemy.exc import IntegrityError

from tools.caller import Caller, Role
from tools.db import Database, PolicyRow
from tools.errors import ConflictError

__all__ = ["DAY", "Policies", "Policy", "Route", "SelfApproval", "policy_of", "route"]

DAY = 24 * 3600
# The longest window the policy may count over: a month of a branch's expenses.
_LONGEST_WINDOW = 31 * DAY


class SelfApproval(StrEnum):
    """Who may approve what they asked for themselves, while someone else could approve it.

    ``not-own-requests`` (the default): nobody approves a request they raised (Arjun's own
    expense goes to Meera or the owner). ``never``: nor any card they asked for. ``allowed``:
    the asker's role is enough, whatever they raised.
    """

    NEVER = "never"
    NOT_OWN_REQUESTS = "not-own-requests"
    ALLOWED = "allowed"


@dataclass(frozen=True, slots=True)
class Policy:
    """A merchant's approval policy; the default asks nothing beyond each tool's own role.

    Attributes:
        approver_role: the least role that may countersign any write.
        two_approvers_from: from this amount (minor units of the merchant's currency) on, a
            write needs two different approvers; None: never.
        escalate_after: seconds a routed card may wait before the owners are told too; None:
            the service's default.
        self_approval: who may approve what they raised or asked for themselves.
        two_approvers_window: seconds back that what the same thing (an order's refunds, a
            branch's expenses) already moved counts toward ``two_approvers_from``; 0: only
            the card's own amount counts.
    """

    approver_role: Role = Role.STAFF
    two_approvers_from: int | None = None
    escalate_after: int | None = None
    self_approval: SelfApproval = SelfApproval.NOT_OWN_REQUESTS
    two_approvers_window: int = DAY

    def needed_role(self, tool_role: Role) -> Role:
        """The stricter of the tool's role and the policy's."""
        return tool_role if tool_role.satisfies(self.approver_role) else self.approver_role

    def approvals_needed(self, amount: int | None) -> int:
        """Two at or above the merchant's amount, else one."""
        limit = self.two_approvers_from
        return 2 if limit is not None and amount is not None and amount >= limit else 1

    @property
    def sums(self) -> bool:
        """Whether what already moved adds to a card's amount (a threshold and a window)."""
        return self.two_approvers_from is not None and self.two_approvers_window > 0

    def kept_out(self, asker: Caller, raised_by: int | None) -> frozenset[int]:
        """Who may not approve this card while someone else could: whoever raised the request
        and, under ``never``, the asker."""
        kept: set[int] = set()
        if self.self_approval is not SelfApproval.ALLOWED and raised_by is not None:
            kept.add(raised_by)
        if self.self_approval is SelfApproval.NEVER:
            kept.add(asker.userid)
        return frozenset(kept)


@dataclass(frozen=True, slots=True)
class Route:
    """Who a card is issued to, how many of them must approve, and whether it left the asker.

    ``kept_out`` are the people the self-approval rule kept from approving it (stored with the
    card, so an escalation cannot add them back); ``kept_asker``: the asker's role was enough,
    but the card is their own request (or, under ``never``, their own card).
    """

    issued_to: tuple[int, ...]
    approvals: int
    needed: Role
    routed: bool
    kept_out: tuple[int, ...] = ()
    kept_asker: bool = False


def route(
    asker: Caller,
    people: Sequence[Caller],
    policy: Policy,
    *,
    tool_role: Role,
    amount: int | None = None,
    raised_by: int | None = None,
    kept_out: Collection[int] = (),
    at_least: int = 1,
) -> Route:
    """The people a card is issued to, decided from the policy and the live roles.

    The asker keeps their card when their role is enough (the seed's case). Otherwise it goes to
    the people who hold exactly the needed role ("Waiting for a manager: Arjun Mehta or Meera
    Iyer"), never to the asker; the roles above it (the owner) hear of it only if it waits too
    long (escalation), unless nobody holds the role itself. With two approvers needed, the card
    is open to the asker when qualified and to enough others; they must be two different
    people.

    Nobody the self-approval rule keeps out (who raised the request, ``raised_by``) is issued
    it while enough others could approve it; when they cannot, the rule steps aside (Sam, alone
    at Harbor Books, approves his own). ``kept_out`` are people kept out whatever happens (a
    batch keeps those its cards kept out). ``at_least``: the approvals an edited card needed.

    Raises:
        ConflictError: nobody (or, when two are needed, not two people) may approve it.
    """
    needed = policy.needed_role(tool_role)
    approvals = max(policy.approvals_needed(amount), at_least)
    always = frozenset(kept_out)
    kept = always | policy.kept_out(asker, raised_by)
    try:
        return _route(asker, people, needed, approvals, kept)
    except ConflictError:
        if kept == always:
            raise
    return _route(asker, people, needed, approvals, always)


def _route(
    asker: Caller, people: Sequence[Caller], needed: Role, approvals: int, kept: frozenset[int]
) -> Route:
    others = [
        p
        for p in people
        if p.userid != asker.userid and p.userid not in kept and p.role.satisfies(needed)
    ]
    level = [p.userid for p in others if p.role is needed]
    above = [p.userid for p in others if p.role is not needed]
    qualified = asker.role.satisfies(needed)
    mine = qualified and asker.userid not in kept
    out = tuple(sorted(kept))
    if mine and approvals == 1:
        return Route((asker.userid,), 1, needed, routed=False, kept_out=out)
    own = (asker.userid,) if mine else ()
    issued = own + tuple(level)
    if len(issued) < approvals:
        issued = own + tuple(level) + tuple(above)
    if len(issued) < approvals:
        raise ConflictError(_too_few(needed, approvals))
    return Route(
        issued, approvals, needed, routed=not mine, kept_out=out, kept_asker=qualified and not mine
    )


def _too_few(needed: Role, approvals: int) -> str:
    if approvals == 2:
        return (
            f"This needs two different people with the {needed} role to approve, and your "
            "merchant does not have two. Ask your owner to change the approval policy."
        )
    return f"Nobody else in your merchant has the {needed} role needed to approve this."


def policy_of(row: PolicyRow | None) -> Policy:
    """The policy a stored row says (the default without one)."""
    if row is None:
        return Policy()
    return Policy(
        Role(row.approver_role),
        row.two_approvers_from,
        row.escalate_after,
        SelfApproval(row.self_approval or SelfApproval.NOT_OWN_REQUESTS),
        DAY if row.two_approvers_window is None else row.two_approvers_window,
    )


class Policies:
    """Reads and changes merchants' policies; a merchant without a row has the default."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, tenantid: int) -> Policy:
        async with self._db.session() as session:
            return policy_of(await session.get(PolicyRow, tenantid))

    async def put(self, tenantid: int, policy: Policy) -> Policy:
        """Stores the whole policy (a read-modify-write: pass ``replace(await get(..), ...)``)."""
        if policy.two_approvers_from is not None and policy.two_approvers_from <= 0:
            raise ConflictError("The amount for two approvers must be above zero.")
        if policy.escalate_after is not None and policy.escalate_after < 60:
            raise ConflictError("Escalation must wait at least 60 seconds.")
        if not 0 <= policy.two_approvers_window <= _LONGEST_WINDOW:
            raise ConflictError("The two-approver window must be between 0 (off) and 31 days.")
        async with self._db.session(write=True) as session:
            row = await session.get(PolicyRow, tenantid)
            if row is None:
                row = PolicyRow(tenant_id=tenantid)
                session.add(row)
            row.approver_role = str(policy.approver_role)
            row.two_approvers_from = policy.two_approvers_from
            row.escalate_after = policy.escalate_after
            row.self_approval = str(policy.self_approval)
            row.two_approvers_window = policy.two_approvers_window
            try:
                await session.commit()
            except IntegrityError:
                # Two first writes of one merchant's policy raced; the other one stands.
                await session.rollback()
                raise ConflictError("The policy changed meanwhile; please run it again.") from None
        return replace(policy)
