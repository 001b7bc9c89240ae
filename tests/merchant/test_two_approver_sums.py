"""The two-approver amount counts what the same thing already moved within the policy's window:
a ₹30,000 refund cut into ₹20,000 and ₹10,000 still needs two approvers, and so does an edit."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from tests.merchant.writes_support import (
    ARJUN,
    MEERA,
    RAVI,
    approve,
    make_registry,
    propose,
    update,
)
from tests.support.clock import SteppedClock
from tools.db import Database
from tools.people.policy import Policies
from tools.registry import Registry
from tools.tool import Proposal
from tools.toolsets.merchant import DEFAULT_AGENT
from tools.toolsets.merchant.models import BranchRequest, Order

ORDER = 5


async def _big_order(db: Database) -> None:
    """Order 5 becomes a ₹40,000 catering order with nothing refunded yet."""
    await update(db, Order, ORDER, total=4_000_000, refunded=0, status="fulfilled")


async def _refund(registry: Registry, amount: str, who: object = MEERA) -> Proposal:
    args = {"order_id": ORDER, "amount": amount}
    return await propose(registry, "refund_order", args, who)  # type: ignore[arg-type]


def _needs(card: Proposal) -> int:
    assert card.routing is not None
    return card.routing.approvals


async def test_an_edit_keeps_the_two_approvers_the_card_needed(db: Database) -> None:
    """Ravi asks for ₹30,000 back (two managers); Meera edits it to ₹20,000. The new card
    used to be hers alone to approve; it still needs two."""
    await _big_order(db)
    registry = make_registry(db)
    asked = await _refund(registry, "30000", RAVI)
    assert _needs(asked) == 2
    edited = await registry.edit(DEFAULT_AGENT, asked.card, MEERA, {"amount": "20000"})
    assert edited.proposal is not None and _needs(edited.proposal) == 2
    assert [i.name for i in edited.proposal.routing.issued_to] == ["Meera Iyer", "Arjun Mehta"]  # type: ignore[union-attr]


async def test_the_rest_of_a_split_refund_needs_two(db: Database) -> None:
    """Meera refunds ₹20,000 alone, then asks for ₹10,000 more on the same order: ₹30,000
    moved within the day, so the second card needs two approvers."""
    await _big_order(db)
    registry = make_registry(db)
    first = await _refund(registry, "20000")
    assert _needs(first) == 1 and (await approve(registry, first, MEERA)).ok
    rest = await _refund(registry, "10000")
    assert _needs(rest) == 2


async def test_what_moved_before_the_window_does_not_count(db: Database) -> None:
    """With a one-hour window, a refund two hours ago no longer adds to the next one."""
    await _big_order(db)
    policies = Policies(db)
    await policies.put(1, replace(await policies.get(1), two_approvers_window=3600))
    clock = SteppedClock()
    registry = make_registry(db, clock=clock)
    first = await _refund(registry, "20000")
    assert (await approve(registry, first, MEERA)).ok
    clock.step(timedelta(hours=2))
    assert _needs(await _refund(registry, "10000")) == 1


async def test_a_card_still_waiting_counts_too(db: Database) -> None:
    """Two expense requests of one branch asked one after the other: the second card counts
    the first, still waiting, and needs two approvers (₹20,000 + ₹7,800)."""
    await update(db, BranchRequest, 6, branch_id=1, amount=2_000_000)
    registry = make_registry(db)
    six = await propose(registry, "approve_request", {"request_id": 6}, MEERA)
    assert _needs(six) == 1
    four = await propose(registry, "approve_request", {"request_id": 4}, MEERA)
    assert _needs(four) == 2


async def test_a_branchs_expenses_in_a_day_add_up(db: Database) -> None:
    """Meera approves a ₹20,000 expense of Indiranagar, then asks for request 4 (₹7,800, same
    branch): it needs two approvers, neither of them Arjun, who raised it."""
    await update(db, BranchRequest, 6, branch_id=1, amount=2_000_000)
    registry = make_registry(db)
    six = await propose(registry, "approve_request", {"request_id": 6}, MEERA)
    assert (await approve(registry, six, MEERA)).ok
    four = await propose(registry, "approve_request", {"request_id": 4}, MEERA)
    assert _needs(four) == 2
    assert four.routing is not None
    assert ARJUN.userid not in [i.userid for i in four.routing.issued_to]
