"""refund_order: the amount it resolves, the card, the threshold, the re-check, exactly-once."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select

from tests.merchant.writes_support import (
    ARJUN,
    MEERA,
    RAVI,
    SAM,
    approve,
    assert_routed,
    count,
    details,
    make_registry,
    propose,
    row,
    snapshot,
    untargeted,
    update,
)
from tools.approving.approval import Decision
from tools.cards.record import CardStatus
from tools.db import Database
from tools.errors import (
    CardDecidedError,
    ConflictError,
    InvalidArgumentsError,
    NotFoundError,
)
from tools.toolsets.merchant.models import Order, Refund
from tools.toolsets.merchant.money import format_money
from tools.toolsets.merchant.writes_orders import RefundOrderArgs

_FIESTA_BRANCHES = {1: "Indiranagar", 2: "Koramangala", 3: "Whitefield"}


def rupees(minor: int) -> str:
    return format_money(minor, "INR", "en_IN")


async def _order(db: Database, tenantid: int = 1, status: str = "fulfilled") -> Order:
    """The first order of a tenant in a status, nothing refunded yet unless it is refunded."""
    async with db.session() as session:
        stmt = (
            select(Order)
            .where(Order.tenant_id == tenantid, Order.status == status)
            .order_by(Order.id)
            .limit(1)
        )
        return (await session.scalars(stmt)).one()


async def test_full_refund_card(db: Database) -> None:
    """With no amount the card refunds all that is left, naming order, customer and branch."""
    order = await _order(db)
    proposal = await propose(make_registry(db), "refund_order", {"order_id": order.id}, ARJUN)
    branch = _FIESTA_BRANCHES[order.branch_id]
    assert proposal.summary == (
        f"Refund {rupees(order.total)} on order {order.id} for {order.customer} at "
        f"{branch} (branch {order.branch_id})."
    )
    assert details(proposal) == {
        "Order": f"{order.id} — {order.customer}, placed {order.created_at:%Y-%m-%d %H:%M} UTC",
        "Branch": f"{branch} (branch {order.branch_id}, Bengaluru)",
        "Order total": rupees(order.total),
        "Refund": f"{rupees(order.total)} (all that is left)",
        "Refunded": f"₹0.00 → {rupees(order.total)}",
        "Status": "fulfilled → refunded",
        "Reason": "none given",
    }
    assert proposal.warning is None


async def test_partial_refund_card_and_effect(db: Database) -> None:
    """A ₹100.50 refund shows 0 → 100.50, leaves the status, and after approval is one Refund row."""
    registry, order = make_registry(db), await _order(db)
    args = {"order_id": order.id, "amount": "100.50", "reason": "Cold food"}
    proposal = await propose(registry, "refund_order", args, ARJUN)
    assert details(proposal)["Refund"] == "₹100.50"
    assert details(proposal)["Refunded"] == "₹0.00 → ₹100.50"
    assert details(proposal)["Status"] == "fulfilled (unchanged)"
    decision = await approve(registry, proposal, ARJUN)
    assert decision.card.status is CardStatus.DONE, decision.error
    after = await row(db, Order, order.id)
    assert (after.refunded, after.status) == (10050, "fulfilled")
    async with db.session() as session:
        refund = (await session.scalars(select(Refund).where(Refund.order_id == order.id))).one()
    assert (refund.amount, refund.reason, refund.approved_by) == (10050, "Cold food", 2)
    assert refund.card_id == proposal.card_id
    assert refund.tenant_id == 1


async def test_full_refund_marks_the_order_refunded(db: Database) -> None:
    """Refunding all that is left sets the order's refunded to its total and its status to refunded."""
    registry, order = make_registry(db), await _order(db)
    proposal = await propose(registry, "refund_order", {"order_id": order.id}, MEERA)
    assert (await approve(registry, proposal, MEERA)).ok
    after = await row(db, Order, order.id)
    assert (after.refunded, after.status) == (order.total, "refunded")


async def test_proposal_changes_nothing(db: Database) -> None:
    """Proposing a refund leaves orders and refunds as they were."""
    registry, order, before = make_registry(db), await _order(db), await snapshot(db)
    await propose(registry, "refund_order", {"order_id": order.id}, ARJUN)
    assert await snapshot(db) == before


async def test_staff_refunds_go_to_the_managers(db: Database) -> None:
    """Ravi (staff) may ask for a refund; the card goes to the managers and owner, not him."""
    order = await _order(db)
    await assert_routed(db, "refund_order", {"order_id": order.id}, RAVI, [ARJUN, MEERA])


async def test_large_refund_warns_above_the_rupee_threshold(db: Database) -> None:
    """₹15,000 is above the ₹10,000 threshold and warns; exactly ₹10,000 does not."""
    registry, order = make_registry(db), await _order(db)
    await update(db, Order, order.id, total=1_500_000)
    proposal = await propose(registry, "refund_order", {"order_id": order.id}, ARJUN)
    assert proposal.warning == (
        "This is a large refund: more than ₹10,000.00. Check the order before approving."
    )
    args = {"order_id": order.id, "amount": "10000"}
    assert (await propose(registry, "refund_order", args, ARJUN)).warning is None


async def test_large_refund_warns_above_the_dollar_threshold(db: Database) -> None:
    """For Harbor Books (USD) the threshold is $200: a $250 refund warns."""
    order = await _order(db, tenantid=2)
    await update(db, Order, order.id, total=25_000)
    proposal = await propose(make_registry(db), "refund_order", {"order_id": order.id}, SAM)
    assert proposal.summary.startswith(f"Refund $250.00 on order {order.id} for ")
    assert proposal.warning == (
        "This is a large refund: more than $200.00. Check the order before approving."
    )


async def test_more_than_is_left_is_refused(db: Database) -> None:
    """A refund above what is left on the order is refused at proposal, saying what is left."""
    order = await _order(db)
    too_much = Decimal(order.total + 1).scaleb(-2)
    with pytest.raises(ConflictError, match=f"has only {rupees(order.total)} left to refund"):
        await propose(
            make_registry(db), "refund_order", {"order_id": order.id, "amount": too_much}, ARJUN
        )


async def test_refunded_and_cancelled_orders_are_refused(db: Database) -> None:
    """An order refunded in full, or a cancelled one, cannot be refunded."""
    registry = make_registry(db)
    refunded = await _order(db, status="refunded")
    with pytest.raises(ConflictError, match="already been refunded in full"):
        await propose(registry, "refund_order", {"order_id": refunded.id}, ARJUN)
    cancelled = await _order(db)
    await update(db, Order, cancelled.id, status="cancelled")
    with pytest.raises(ConflictError, match=f"Order {cancelled.id} was cancelled"):
        await propose(registry, "refund_order", {"order_id": cancelled.id}, ARJUN)


@pytest.mark.parametrize("amount", ["0", "-5", "1.005", "abc"])
async def test_invalid_amounts_are_refused(db: Database, amount: str) -> None:
    """Zero, negative, sub-paisa and non-numeric amounts are refused as invalid arguments."""
    order = await _order(db)
    with pytest.raises(InvalidArgumentsError):
        await propose(
            make_registry(db), "refund_order", {"order_id": order.id, "amount": amount}, ARJUN
        )


async def test_unknown_or_foreign_order_is_not_found(db: Database) -> None:
    """Order 9999 does not exist, and a Harbor Books order is invisible to Fiesta."""
    registry, harbor = make_registry(db), await _order(db, tenantid=2)
    for order_id in (9999, harbor.id):
        with pytest.raises(NotFoundError, match=f"There is no order {order_id}"):
            await propose(registry, "refund_order", {"order_id": order_id}, ARJUN)


async def test_refund_meanwhile_fails_at_execution(db: Database) -> None:
    """A full-refund card fails when a partial refund landed first; no second refund is written."""
    registry, order = make_registry(db), await _order(db)
    full = await untargeted(
        db, await propose(registry, "refund_order", {"order_id": order.id}, ARJUN)
    )
    part = await propose(registry, "refund_order", {"order_id": order.id, "amount": 100}, MEERA)
    assert (await approve(registry, part, MEERA)).ok
    decision = await approve(registry, full, ARJUN)
    assert decision.card.status is CardStatus.FAILED
    assert isinstance(decision.error, ConflictError)
    assert f"has only {rupees(order.total - 10000)} left to refund" in str(decision.error)
    assert await count(db, Refund, Refund.order_id == order.id) == 1
    assert (await row(db, Order, order.id)).refunded == 10000


async def test_resolved_amount_round_trips_as_decimal(db: Database) -> None:
    """ "All that is left" is sealed as the exact Decimal shown, and reads back as that Decimal."""
    registry, order = make_registry(db), await _order(db)
    proposal = await propose(registry, "refund_order", {"order_id": order.id}, ARJUN)
    expected = Decimal(order.total).scaleb(-2)
    assert proposal.args == RefundOrderArgs(order_id=order.id, amount=expected, reason="")
    record = await registry.card(proposal.card_id)
    assert record is not None
    again = RefundOrderArgs.model_validate(record.args)
    assert again == proposal.args
    assert type(again.order_id) is int
    assert type(again.amount) is Decimal
    assert str(again.amount) == f"{expected:.2f}"


async def test_fifty_presses_of_one_card_refund_once(db: Database) -> None:
    """Fifty concurrent approvals of one refund card write one Refund; 49 are told it was decided."""
    registry, order = make_registry(db), await _order(db)
    args = {"order_id": order.id, "amount": "100.00"}
    proposal = await propose(registry, "refund_order", args, ARJUN)
    outcomes: list[Any] = await asyncio.gather(
        *(approve(registry, proposal, ARJUN) for _ in range(50)), return_exceptions=True
    )
    decisions = [o for o in outcomes if isinstance(o, Decision)]
    assert len(decisions) == 1
    assert decisions[0].card.status is CardStatus.DONE
    assert sum(isinstance(o, CardDecidedError) for o in outcomes) == 49
    assert await count(db, Refund, Refund.order_id == order.id) == 1
    assert (await row(db, Order, order.id)).refunded == 10000


async def test_cards_racing_for_one_order_refund_once(db: Database) -> None:
    """Five full-refund cards approved at once: the row lock lets one through, four fail."""
    registry, order = make_registry(db), await _order(db)
    cards = [
        await untargeted(db, await propose(registry, "refund_order", {"order_id": order.id}, ARJUN))
        for _ in range(5)
    ]
    decisions = await asyncio.gather(*(approve(registry, card, ARJUN) for card in cards))
    statuses = sorted(d.card.status for d in decisions)
    assert statuses == [CardStatus.DONE] + [CardStatus.FAILED] * 4
    assert await count(db, Refund, Refund.order_id == order.id) == 1
    assert (await row(db, Order, order.id)).refunded == order.total
