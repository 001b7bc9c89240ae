"""Who may countersign a merchant's writes: the merchant's policy, stored as data; never per tool.

The seed binds a card to the person who asked: the human countersigns what the model proposed.
A merchant adds its own rules about *which* human. A write's own role requirement stays with the
tool; the policy can only raise it (every write needs a manager) and ask for a second approver
from an amount on. ``route`` turns the policy, the asker and the merchant's people into the set
of people a card is issued to; the server decides it, never the model or the presser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlalchemy.exc import IntegrityError

from tools.caller import Caller, Role
from tools.db import Database, PolicyRow
from tools.errors import ConflictError

__all__ = ["Policies", "Policy", "Route", "policy_of", "route"]


@dataclass(frozen=True, slots=True)
class Policy:
    """A merchant's approval policy; the default asks nothing beyond each tool's own role.

    Attributes:
        approver_role: the least role that may countersign any write.
        two_approvers_from: from this amount (minor units of the merchant's currency) on, a
            write needs two different approvers; None: never.
        escalate_after: seconds a routed card may wait before the owners are told too; None:
            the service's default.
    """

    approver_role: Role = Role.STAFF
    two_approvers_from: int | None = None
    escalate_after: int | None = None

    def needed_role(self, tool_role: Role) -> Role:
        """The stricter of the tool's role and the policy's."""
        return tool_role if tool_role.satisfies(self.approver_role) else self.approver_role

    def approvals_needed(self, amount: int | None) -> int:
        """Two at or above the merchant's amount, else one."""
        limit = self.two_approvers_from
        return 2 if limit is not None and amount is not None and amount >= limit else 1


@dataclass(frozen=True, slots=True)
class Route:
    """Who a card is issued to, how many of them must approve, and whether it left the asker."""

    issued_to: tuple[int, ...]
    approvals: int
    needed: Role
    routed: bool


def route(
    asker: Caller,
    people: Sequence[Caller],
    policy: Policy,
    *,
    tool_role: Role,
    amount: int | None = None,
) -> Route:
    """The people a card is issued to, decided from the policy and the live roles.

    The asker keeps their card when their role is enough (the seed's case). Otherwise it goes to
    the people who hold exactly the needed role ("Waiting for a manager: Arjun Mehta or Meera
    Iyer"), never to the asker; the roles above it (the owner) hear of it only if it waits too
    long (escalation), unless nobody holds the role itself. With two approvers needed, the card
    is open to the asker when qualified and to enough others; they must be two different
    people.

    Raises:
        ConflictError: nobody (or, when two are needed, not two people) may approve it.
    """
    needed = policy.needed_role(tool_role)
    approvals = policy.approvals_needed(amount)
    others = [p for p in people if p.userid != asker.userid and p.role.satisfies(needed)]
    level = [p.userid for p in others if p.role is needed]
    above = [p.userid for p in others if p.role is not needed]
    mine = asker.role.satisfies(needed)
    if mine and approvals == 1:
        return Route((asker.userid,), 1, needed, routed=False)
    own = (asker.userid,) if mine else ()
    issued = own + tuple(level)
    if len(issued) < approvals:
        issued = own + tuple(level) + tuple(above)
    if len(issued) < approvals:
        raise ConflictError(_too_few(needed, approvals))
    return Route(issued, approvals, needed, routed=not mine)


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
    return Policy(Role(row.approver_role), row.two_approvers_from, row.escalate_after)


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
        async with self._db.session(write=True) as session:
            row = await session.get(PolicyRow, tenantid)
            if row is None:
                row = PolicyRow(tenant_id=tenantid)
                session.add(row)
            row.approver_role = str(policy.approver_role)
            row.two_approvers_from = policy.two_approvers_from
            row.escalate_after = policy.escalate_after
            try:
                await session.commit()
            except IntegrityError:
                # Two first writes of one merchant's policy raced; the other one stands.
                await session.rollback()
                raise ConflictError("The policy changed meanwhile; please run it again.") from None
        return replace(policy)
