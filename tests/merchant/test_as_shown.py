"""What the person saw is what runs: a write whose shown facts moved since its card was drawn
runs nothing, and its card says what changed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.merchant.writes_support import (
    MEERA,
    PRIYA,
    approve,
    count,
    make_registry,
    propose,
    row,
    snapshot,
    update,
)
from tools.approving.as_shown import _changed
from tools.cards.record import CardRecord, CardStatus
from tools.db import Database
from tools.errors import ChangedSinceShownError
from tools.tool import Proposal, ProposalDetail
from tools.toolsets.merchant.models import Branch, BranchRequest, Order, Product, Refund, Stock


async def _refused(db: Database, tool: str, args: dict[str, Any], change: Any) -> str:
    """Proposes, lets ``change`` move the live data, approves, and returns the card's outcome
    after checking that nothing of the merchant's data changed past ``change``."""
    registry = make_registry(db)
    proposal = await propose(registry, tool, args, PRIYA)
    await change()
    before = await snapshot(db)
    decision = await approve(registry, proposal, PRIYA)
    assert decision.card.status is CardStatus.FAILED
    assert isinstance(decision.error, ChangedSinceShownError)
    assert await snapshot(db) == before
    assert decision.card.outcome == str(decision.error)
    return str(decision.error)


async def test_an_amount_raised_after_the_card_runs_nothing(db: Database) -> None:
    """Request 4 showed ₹7,800.00; raised to ₹50,00,000 meanwhile, the press approves nothing."""

    async def raise_it() -> None:
        await update(db, BranchRequest, 4, amount=5_000_000_00)

    said = await _refused(db, "approve_request", {"request_id": 4}, raise_it)
    assert said == (
        "Request 4's amount is now ₹50,00,000.00, not the ₹7,800.00 on this card; nothing was "
        "changed. Ask again for a new card."
    )
    assert (await row(db, BranchRequest, 4)).status == "pending"


async def test_a_new_card_for_the_raised_amount_is_routed_afresh(db: Database) -> None:
    """After the refusal, asking again draws the new amount and needs two approvers."""
    registry = make_registry(db)
    first = await propose(registry, "approve_request", {"request_id": 4}, MEERA)
    assert first.routing is not None and first.routing.approvals == 1
    await update(db, BranchRequest, 4, amount=5_000_000_00)
    assert not (await approve(registry, first, MEERA)).ok
    again = await propose(registry, "approve_request", {"request_id": 4}, MEERA)
    assert again.routing is not None and again.routing.approvals == 2


async def test_a_stock_line_that_moved_runs_nothing(db: Database) -> None:
    """The card said 25 → 13; two sold meanwhile, so the adjustment does not land on 11."""
    args = {"branch": 1, "sku": "FF-PANEER-WRAP", "delta": -12, "reason": "Spoiled."}

    async def sell_two() -> None:
        async with db.session(write=True) as session, session.begin():
            line = await session.get(Stock, 1)
            assert line is not None
            line.quantity -= 2

    said = await _refused(db, "adjust_stock", args, sell_two)
    assert "quantity is now" in said and "on this card; nothing was changed" in said


async def test_a_price_changed_meanwhile_runs_nothing(db: Database) -> None:
    """The card showed the old price as its before; another change of price refuses it."""

    async def reprice() -> None:
        async with db.session() as session:
            product = await session.get(Product, 1)
            assert product is not None
            old = product.price
        await update(db, Product, 1, price=old + 100)

    product = await row(db, Product, 1)
    args = {"sku": product.sku, "price": "1"}
    said = await _refused(db, "set_price", args, reprice)
    assert said.endswith("on this card; nothing was changed. Ask again for a new card.")


async def test_a_refund_on_an_order_refunded_meanwhile_runs_nothing(db: Database) -> None:
    """A partial refund landed after the card was drawn: "Refunded" no longer reads as shown."""
    order = await row(db, Order, 1)
    args = {"order_id": 1, "amount": "1", "reason": "Cold food."}

    async def refund_some() -> None:
        await update(db, Order, 1, refunded=order.refunded + 100)

    refunds = await count(db, Refund)
    said = await _refused(db, "refund_order", args, refund_some)
    assert "Order 1's refunded is now" in said
    assert await count(db, Refund) == refunds


async def test_a_renamed_branch_runs_nothing(db: Database) -> None:
    """Names that identify count too: the card named Indiranagar, the branch is now another."""

    async def rename() -> None:
        await update(db, Branch, 2, name="Koramangala East")

    said = await _refused(db, "close_branch", {"branch": 2}, rename)
    assert "Koramangala East" in said


async def test_an_unchanged_card_still_runs(db: Database) -> None:
    """Nothing moved: the re-read matches what was shown and the write runs once."""
    registry = make_registry(db)
    proposal = await propose(registry, "approve_request", {"request_id": 4}, PRIYA)
    assert (await approve(registry, proposal, PRIYA)).ok
    assert (await row(db, BranchRequest, 4)).status == "approved"


def test_each_way_a_card_can_read_otherwise_is_named() -> None:
    """A detail changed, gone or new, or only the sentence: each refusal says which."""
    now = datetime(2026, 12, 1, tzinfo=UTC)
    card = CardRecord(
        card_id="c", tool="t", agent="a", userid=1, tenantid=1, args={}, digest="d",
        summary="Do it.", details=(("Stock", "5 → 3"),), warning=None,
        status=CardStatus.EXECUTING, created_at=now, expires_at=now, decided_by=None,
        decided_by_name=None, decided_at=None, reason=None, outcome=None, posting=None,
    )  # fmt: skip

    def fresh(summary: str, *details: tuple[str, str]) -> Proposal:
        return Proposal(summary, tuple(ProposalDetail(*d) for d in details), subject="Line 1")

    assert _changed(card, fresh("Do it.", ("Stock", "5 → 3"))) is None
    moved = _changed(card, fresh("Do it.", ("Stock", "4 → 2")))
    assert moved == "Line 1's stock is now 4, not the 5 on this card"
    assert _changed(card, fresh("Do it.")) == (
        "This card showed stock 5 → 3, which no longer applies"
    )
    new = _changed(card, fresh("Do it.", ("Stock", "5 → 3"), ("Held", "2")))
    assert new == "This card would now also show held 2"
    assert _changed(card, fresh("Do that.", ("Stock", "5 → 3"))) == (
        "This card now reads “Do that”, not “Do it”"
    )
