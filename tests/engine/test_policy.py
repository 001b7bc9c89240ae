"""The merchant's approval policy: who a card is issued to, and when two must approve."""

from __future__ import annotations

import pytest

from tests.engine.conftest import ARJUN, MEERA, PRIYA, RAVI, SAM
from tools.caller import Role
from tools.db import Database
from tools.errors import ConflictError
from tools.policy import Policies, Policy, route

FIESTA_PEOPLE = (PRIYA, ARJUN, MEERA, RAVI)
FIESTA_POLICY = Policy(Role.MANAGER, two_approvers_from=2_500_000)


def test_an_asker_whose_role_is_enough_keeps_the_card() -> None:
    """The seed's case: a manager asks for a manager's write and approves it alone."""
    got = route(ARJUN, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.MANAGER, amount=100)
    assert (got.issued_to, got.approvals, got.routed) == ((ARJUN.userid,), 1, False)


def test_staff_asking_routes_the_card_to_every_manager_but_not_the_asker() -> None:
    """Ravi (staff) asks; the card goes to Arjun and Meera (the owner hears of it only by
    escalation), never back to Ravi."""
    got = route(RAVI, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.STAFF)
    assert got.routed and got.needed is Role.MANAGER
    assert got.issued_to == (ARJUN.userid, MEERA.userid)
    assert RAVI.userid not in got.issued_to


def test_with_no_one_at_the_role_the_roles_above_are_asked() -> None:
    """A merchant without managers: Ravi's card goes straight to Priya, the owner."""
    got = route(RAVI, (PRIYA, RAVI), FIESTA_POLICY, tool_role=Role.STAFF)
    assert got.routed and got.issued_to == (PRIYA.userid,)


def test_the_tools_own_role_is_never_lowered_by_the_policy() -> None:
    """An owner-only write stays owner-only under a manager policy: only Priya is issued it."""
    got = route(ARJUN, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.OWNER)
    assert got.issued_to == (PRIYA.userid,) and got.needed is Role.OWNER


def test_two_approvers_from_the_amount_on_the_asker_may_be_one() -> None:
    """At ₹25,000 a manager's card opens to every manager, himself included, and needs two."""
    got = route(ARJUN, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.MANAGER, amount=2_500_000)
    assert got.approvals == 2 and not got.routed
    assert got.issued_to == (ARJUN.userid, MEERA.userid)
    lone = route(ARJUN, (PRIYA, ARJUN), FIESTA_POLICY, tool_role=Role.MANAGER, amount=2_500_000)
    assert lone.issued_to == (ARJUN.userid, PRIYA.userid)
    below = route(ARJUN, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.MANAGER, amount=2_499_999)
    assert below.approvals == 1


def test_a_one_person_merchant_approves_its_own_cards() -> None:
    """Harbor Books (Sam alone) approves his own card under the default policy."""
    got = route(SAM, (SAM,), Policy(), tool_role=Role.OWNER, amount=10**9)
    assert got.issued_to == (SAM.userid,) and got.approvals == 1


def test_nobody_to_approve_is_a_clear_refusal() -> None:
    """When not enough people hold the role, the asker is told plainly instead of a dead card."""
    with pytest.raises(ConflictError, match="Nobody else"):
        route(RAVI, (RAVI,), FIESTA_POLICY, tool_role=Role.STAFF)
    with pytest.raises(ConflictError, match="two different people"):
        route(SAM, (SAM,), Policy(two_approvers_from=1), tool_role=Role.OWNER, amount=5)


async def test_policies_are_stored_per_merchant(db: Database) -> None:
    """A merchant without a policy has the default; one merchant's policy is not another's.

    The demo gives Fiesta Foods its policy (a manager, two approvers from ₹25,000)."""
    policies = Policies(db)
    assert await policies.get(1) == FIESTA_POLICY
    assert await policies.get(2) == Policy()
    await policies.put(1, FIESTA_POLICY)
    await policies.put(1, Policy(Role.MANAGER, 2_500_000, escalate_after=600))
    assert await policies.get(1) == Policy(Role.MANAGER, 2_500_000, 600)
    assert await policies.get(2) == Policy()


async def test_a_nonsense_policy_is_refused(db: Database) -> None:
    """A zero amount or an escalation under a minute is refused and nothing is stored."""
    policies = Policies(db)
    with pytest.raises(ConflictError, match="above zero"):
        await policies.put(2, Policy(two_approvers_from=0))
    with pytest.raises(ConflictError, match="60 seconds"):
        await policies.put(2, Policy(escalate_after=5))
    assert await policies.get(2) == Policy()
