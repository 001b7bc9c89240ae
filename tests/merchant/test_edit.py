"""Edit before approve: a changed card is proposed again, replaces the old one, and runs once."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import select

from tests.merchant.writes_support import (
    ARJUN,
    MEERA,
    PRIYA,
    RAVI,
    approve,
    count,
    detail,
    make_registry,
    propose,
    snapshot,
)
from tools.cards.record import CardStatus
from tools.db import Database
from tools.errors import (
    CardDecidedError,
    ConflictError,
    InvalidArgumentsError,
    NotYourCardError,
)
from tools.registry import Registry
from tools.tool import Proposal
from tools.toolsets.merchant import DEFAULT_AGENT
from tools.toolsets.merchant.models import Order, Refund


async def _order(db: Database) -> Order:
    """A fulfilled order of Fiesta with at least ₹300 to refund."""
    async with db.session() as session:
        stmt = (
            select(Order)
            .where(Order.tenant_id == 1, Order.status == "fulfilled", Order.total >= 30_000)
            .order_by(Order.id)
            .limit(1)
        )
        return (await session.scalars(stmt)).one()


async def _card(db: Database) -> tuple[Registry, Order, Proposal]:
    registry, order = make_registry(db), await _order(db)
    proposal = await propose(
        registry, "refund_order", {"order_id": order.id, "amount": "300"}, ARJUN
    )
    return registry, order, proposal


async def test_edit_refund_amount_replaces_card_and_runs_once(db: Database) -> None:
    """300 → 200: a new card for 200 replaces the old; approving it refunds 200 once."""
    registry, order, old = await _card(db)
    result = await registry.edit(DEFAULT_AGENT, old.card, ARJUN, {"amount": "200"})
    new = result.proposal
    assert new is not None and new.card_id != old.card_id
    assert detail(new, "Refund") == "₹200.00"
    assert new.replaced == (old.card_id,)
    assert new.editable == ("amount", "reason")
    stored = await registry.card(old.card_id)
    assert stored is not None and stored.status is CardStatus.SUPERSEDED
    assert stored.outcome == "Replaced by an edited card: ₹300.00 → ₹200.00"
    assert stored.replaced_by == new.card_id
    decision = await approve(registry, new, ARJUN)
    assert decision.ok
    with pytest.raises(CardDecidedError):
        await approve(registry, new, ARJUN)
    with pytest.raises(CardDecidedError):
        await approve(registry, old, ARJUN)
    async with db.session() as session:
        refunds = (await session.scalars(select(Refund).where(Refund.order_id == order.id))).all()
        assert [r.amount for r in refunds] == [20_000]
        refreshed = await session.get(Order, order.id)
        assert refreshed is not None and refreshed.refunded == order.refunded + 20_000


@pytest.mark.parametrize("amount", ["-5", "0", "99999999"])
async def test_invalid_amount_is_refused_and_nothing_changes(db: Database, amount: str) -> None:
    """A negative amount, zero, or more than is left is refused; the old card stays live."""
    registry, order, old = await _card(db)
    before = await snapshot(db)
    with pytest.raises((InvalidArgumentsError, ConflictError)) as refused:
        await registry.edit(DEFAULT_AGENT, old.card, ARJUN, {"amount": amount})
    assert "amount" in str(refused.value).lower() or "left to refund" in str(refused.value)
    stored = await registry.card(old.card_id)
    assert stored is not None and stored.status is CardStatus.PENDING
    assert await snapshot(db) == before
    decision = await approve(registry, old, ARJUN)
    assert decision.ok
    assert await count(db, Refund, Refund.order_id == order.id) == 1


async def test_field_that_is_not_editable_is_refused(db: Database) -> None:
    """The order of a refund cannot be edited: the edit is refused by name and the card stays."""
    registry, order, old = await _card(db)
    with pytest.raises(InvalidArgumentsError, match="order_id cannot be edited"):
        await registry.edit(DEFAULT_AGENT, old.card, ARJUN, {"order_id": order.id + 1})
    stored = await registry.card(old.card_id)
    assert stored is not None and stored.status is CardStatus.PENDING


async def test_edit_that_changes_nothing_is_refused(db: Database) -> None:
    """Submitting the same amount makes no new card and says so."""
    registry, _order_row, old = await _card(db)
    with pytest.raises(InvalidArgumentsError, match="changes nothing"):
        await registry.edit(DEFAULT_AGENT, old.card, ARJUN, {"amount": Decimal("300.00")})


@pytest.mark.parametrize("who", [MEERA, RAVI, PRIYA])
async def test_someone_the_card_is_not_issued_to_cannot_edit(db: Database, who: object) -> None:
    """Another manager, a staff member, even the owner: not issued the card, cannot edit it."""
    registry, _order_row, old = await _card(db)
    with pytest.raises(NotYourCardError):
        await registry.edit(DEFAULT_AGENT, old.card, who, {"amount": "200"})  # type: ignore[arg-type]
    stored = await registry.card(old.card_id)
    assert stored is not None and stored.status is CardStatus.PENDING


async def test_decided_card_cannot_be_edited(db: Database) -> None:
    """Once approved, Edit is refused and no second card appears."""
    registry, order, old = await _card(db)
    await approve(registry, old, ARJUN)
    with pytest.raises(ConflictError, match="no longer waiting"):
        await registry.edit(DEFAULT_AGENT, old.card, ARJUN, {"amount": "200"})
    assert await count(db, Refund, Refund.order_id == order.id) == 1
