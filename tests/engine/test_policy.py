"""The merchant's approval policy: who a card is issued to, and when two must approve."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.engine.conftest import ARJUN, MEERA, PRIYA, RAVI, SAM
from tools.caller import Role
from tools.db import Database
from tools.errors import ConflictError
from tools.people.policy import Policies, Policy, SelfApproval, route

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


def test_a_manager_does_not_approve_a_request_he_raised() -> None:
    """Arjun raised request 4 and asks to approve it: the card goes to Meera, not to him."""
    got = route(ARJUN, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.MANAGER, raised_by=2)
    assert got.issued_to == (MEERA.userid,) and got.routed
    assert got.kept_out == (ARJUN.userid,) and got.kept_asker


def test_someone_else_asking_for_a_managers_request_skips_him() -> None:
    """Ravi asks to approve Arjun's request: only Meera is issued it; Arjun is kept out."""
    got = route(RAVI, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.STAFF, raised_by=2)
    assert got.issued_to == (MEERA.userid,) and got.kept_out == (ARJUN.userid,)
    assert not got.kept_asker


def test_two_approvers_for_ones_own_request_are_two_others() -> None:
    """At ₹25,000 Arjun's own request needs two people other than him: Meera and Priya."""
    got = route(
        ARJUN, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.MANAGER, amount=2_500_000, raised_by=2
    )
    assert got.approvals == 2 and got.issued_to == (MEERA.userid, PRIYA.userid)


def test_alone_one_still_approves_ones_own_request() -> None:
    """Sam, alone at Harbor Books, approves the request he raised: nobody else could."""
    got = route(SAM, (SAM,), Policy(), tool_role=Role.MANAGER, raised_by=SAM.userid)
    assert got.issued_to == (SAM.userid,) and got.kept_out == () and not got.routed


def test_never_keeps_every_asker_off_their_own_card() -> None:
    """Under "never" Arjun's own refund goes to Meera; "allowed" gives him back request 4."""
    never = replace(FIESTA_POLICY, self_approval=SelfApproval.NEVER)
    got = route(ARJUN, FIESTA_PEOPLE, never, tool_role=Role.MANAGER)
    assert got.issued_to == (MEERA.userid,) and got.kept_asker
    assert route(
        SAM, (SAM,), replace(Policy(), self_approval=SelfApproval.NEVER), tool_role=Role.OWNER
    ).issued_to == (SAM.userid,)
    allowed = replace(FIESTA_POLICY, self_approval=SelfApproval.ALLOWED)
    mine = route(ARJUN, FIESTA_PEOPLE, allowed, tool_role=Role.MANAGER, raised_by=2)
    assert mine.issued_to == (ARJUN.userid,) and not mine.routed


def test_a_floor_from_an_edited_card_keeps_two_approvers() -> None:
    """An edit below the amount still needs the two approvers the edited card needed."""
    got = route(MEERA, FIESTA_PEOPLE, FIESTA_POLICY, tool_role=Role.MANAGER, amount=5, at_least=2)
    assert got.approvals == 2 and got.issued_to == (MEERA.userid, ARJUN.userid)


async def test_the_window_and_self_approval_are_stored(db: Database) -> None:
    """The two-approver window and the self-approval rule round-trip; the defaults are a day
    and not-own-requests."""
    policies = Policies(db)
    assert (await policies.get(2)).two_approvers_window == 24 * 3600
    assert (await policies.get(2)).self_approval is SelfApproval.NOT_OWN_REQUESTS
    stored = Policy(Role.MANAGER, 2_500_000, None, SelfApproval.NEVER, two_approvers_window=0)
    await policies.put(1, stored)
    assert await policies.get(1) == stored
    with pytest.raises(ConflictError, match="window"):
        await policies.put(2, Policy(two_approvers_window=-1))
