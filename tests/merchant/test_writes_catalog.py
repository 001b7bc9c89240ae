"""adjust_stock and set_price: resolution, before → after on the card, warnings, re-check, ledger."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import select

from tests.merchant.writes_support import (
    ARJUN,
    MEERA,
    PRIYA,
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
)
from tools.cards.record import CardStatus
from tools.db import Database
from tools.errors import (
    AmbiguousError,
    ConflictError,
    InvalidArgumentsError,
    NotFoundError,
)
from tools.toolsets.merchant.models import PriceChange, Product, Stock, StockMovement
from tools.toolsets.merchant.writes_catalog import AdjustStockArgs, SetPriceArgs

_WRAP = "FF-PANEER-WRAP"


async def _stock(db: Database, branch_id: int = 3, product_id: int = 1) -> Stock:
    async with db.session() as session:
        stmt = select(Stock).where(Stock.branch_id == branch_id, Stock.product_id == product_id)
        return (await session.scalars(stmt)).one()


def _stock_args(delta: int, **changes: object) -> dict[str, object]:
    return {"branch": "Whitefield", "sku": _WRAP, "delta": delta, "reason": "Count", **changes}


async def test_stock_card_shows_quantity_before_and_after(db: Database) -> None:
    """Removing 5 wraps at Whitefield names branch and product by id and name and shows q → q-5."""
    quantity = (await _stock(db)).quantity
    args = _stock_args(-5, reason="Five were dropped.")
    proposal = await propose(make_registry(db), "adjust_stock", args, ARJUN)
    assert proposal.summary == (
        "Remove 5 units of Paneer Tikka Wrap (SKU FF-PANEER-WRAP) from the stock at "
        "Whitefield (branch 3)."
    )
    assert details(proposal) == {
        "Branch": "Whitefield (branch 3, Bengaluru)",
        "Product": "Paneer Tikka Wrap (SKU FF-PANEER-WRAP, product 1)",
        "Change": "-5",
        "Quantity": f"{quantity} → {quantity - 5}",
        "Reason": "Five were dropped.",
    }
    assert proposal.warning is None


async def test_stock_card_resolves_names_into_ids(db: Database) -> None:
    """ "whitefield" and "paneer" are sealed as branch 3 and the product's exact SKU."""
    registry = make_registry(db)
    args = {"branch": "whitefield", "sku": "paneer", "delta": 1, "reason": "Delivery"}
    proposal = await propose(registry, "adjust_stock", args, ARJUN)
    assert proposal.summary.startswith("Add 1 unit of Paneer Tikka Wrap")
    expected = AdjustStockArgs(branch=3, sku=_WRAP, delta=1, reason="Delivery")
    assert proposal.args == expected
    record = await registry.card(proposal.card_id)
    assert record is not None
    again = AdjustStockArgs.model_validate(record.args)
    assert again == expected
    assert (type(again.branch), type(again.delta)) == (int, int)


async def test_stock_to_zero_warns_and_below_zero_is_refused(db: Database) -> None:
    """Taking all units warns that none are left; taking one more is refused."""
    registry, quantity = make_registry(db), (await _stock(db)).quantity
    proposal = await propose(registry, "adjust_stock", _stock_args(-quantity), ARJUN)
    assert details(proposal)["Quantity"] == f"{quantity} → 0"
    assert proposal.warning == "This leaves Whitefield with no Paneer Tikka Wrap at all."
    with pytest.raises(ConflictError, match="would leave -1"):
        await propose(registry, "adjust_stock", _stock_args(-quantity - 1), ARJUN)


@pytest.mark.parametrize("bad", [{"delta": 0}, {"reason": " "}, {"delta": 10**9}])
async def test_invalid_stock_arguments(db: Database, bad: dict[str, object]) -> None:
    """A zero change, a blank reason or an absurd change is refused by the schema."""
    args = {**_stock_args(1), **bad}
    with pytest.raises(InvalidArgumentsError):
        await propose(make_registry(db), "adjust_stock", args, ARJUN)


async def test_ambiguous_or_unknown_product(db: Database) -> None:
    """ "m" matches Masala Dosa and Mango Lassi; "FF-NOPE" matches nothing."""
    registry = make_registry(db)
    with pytest.raises(AmbiguousError) as refused:
        await propose(registry, "adjust_stock", _stock_args(1, sku="m"), ARJUN)
    assert sorted(refused.value.candidates) == [
        "Mango Lassi (SKU FF-MANGO-LASSI)",
        "Masala Dosa (SKU FF-MASALA-DOSA)",
    ]
    with pytest.raises(NotFoundError, match="There is no product called 'FF-NOPE'"):
        await propose(registry, "adjust_stock", _stock_args(1, sku="FF-NOPE"), ARJUN)
    with pytest.raises(NotFoundError, match="There is no product called 'HB-ATLAS-002'"):
        await propose(registry, "adjust_stock", _stock_args(1, sku="HB-ATLAS-002"), ARJUN)


async def test_stock_after_approval(db: Database) -> None:
    """After approval the quantity moved by the delta and one StockMovement carries the card id."""
    registry, stock = make_registry(db), await _stock(db)
    proposal = await propose(registry, "adjust_stock", _stock_args(12, reason="Delivery"), ARJUN)
    decision = await approve(registry, proposal, ARJUN)
    assert decision.card.status is CardStatus.DONE, decision.error
    assert (await _stock(db)).quantity == stock.quantity + 12
    async with db.session() as session:
        movement = (await session.scalars(select(StockMovement))).one()
    assert (movement.stock_id, movement.delta, movement.reason) == (stock.id, 12, "Delivery")
    assert (movement.approved_by, movement.card_id) == (2, proposal.card_id)


async def test_stock_dropped_meanwhile_fails_at_execution(db: Database) -> None:
    """A card taking all units fails once another card took 10 first; quantity and ledger keep one move."""
    registry, quantity = make_registry(db), (await _stock(db)).quantity
    take_all = await untargeted(
        db, await propose(registry, "adjust_stock", _stock_args(-quantity), ARJUN)
    )
    take_ten = await propose(registry, "adjust_stock", _stock_args(-10), MEERA)
    assert (await approve(registry, take_ten, MEERA)).ok
    decision = await approve(registry, take_all, ARJUN)
    assert decision.card.status is CardStatus.FAILED
    assert isinstance(decision.error, ConflictError)
    assert f"has {quantity - 10} of Paneer Tikka Wrap" in str(decision.error)
    assert (await _stock(db)).quantity == quantity - 10
    assert await count(db, StockMovement) == 1


async def test_staff_stock_changes_go_to_the_managers(db: Database) -> None:
    """Ravi (staff) may ask to adjust stock; the card goes to those who may approve it."""
    await assert_routed(db, "adjust_stock", _stock_args(1), RAVI, [ARJUN, MEERA])


async def test_proposals_change_nothing(db: Database) -> None:
    """Proposing a stock change and a price change leaves every row as it was."""
    registry, before = make_registry(db), await snapshot(db)
    await propose(registry, "adjust_stock", _stock_args(-3), ARJUN)
    await propose(registry, "set_price", {"sku": _WRAP, "price": "299"}, PRIYA)
    assert await snapshot(db) == before


async def test_price_card_shows_old_new_and_percentage(db: Database) -> None:
    """₹249 → ₹299 shows both prices and +20.1 %, without a warning."""
    proposal = await propose(make_registry(db), "set_price", {"sku": _WRAP, "price": 299}, PRIYA)
    assert proposal.summary == (
        "Change the price of Paneer Tikka Wrap (SKU FF-PANEER-WRAP) from ₹249.00 to ₹299.00 "
        "(+20.1 %)."
    )
    assert details(proposal) == {
        "Product": "Paneer Tikka Wrap (SKU FF-PANEER-WRAP, product 1)",
        "Price": "₹249.00 → ₹299.00",
        "Change": "+20.1 %",
    }
    assert proposal.warning is None


@pytest.mark.parametrize(
    ("price", "warning"),
    [
        ("323.70", None),
        ("349", "This changes the price by +40.2 %, more than 30 %."),
        ("149", "This changes the price by -40.2 %, more than 30 %."),
    ],
)
async def test_price_change_above_thirty_percent_warns(
    db: Database, price: str, warning: str | None
) -> None:
    """Exactly +30 % passes quietly; ±40 % either way warns."""
    args = {"sku": _WRAP, "price": price}
    assert (await propose(make_registry(db), "set_price", args, PRIYA)).warning == warning


async def test_unchanged_price_is_refused(db: Database) -> None:
    """Setting the price it already has is refused at proposal."""
    with pytest.raises(ConflictError, match=r"already costs ₹249\.00"):
        await propose(make_registry(db), "set_price", {"sku": _WRAP, "price": "249.00"}, PRIYA)


@pytest.mark.parametrize("price", ["0", "-1", "2.999"])
async def test_invalid_prices_are_refused(db: Database, price: str) -> None:
    """A price of zero, below zero or with more decimals than the currency has is refused."""
    with pytest.raises(InvalidArgumentsError):
        await propose(make_registry(db), "set_price", {"sku": _WRAP, "price": price}, PRIYA)


async def test_only_the_owner_may_approve_prices(db: Database) -> None:
    """Ravi (staff) and Arjun (manager) may ask; a price card goes to Priya, the owner.

    Ravi asks first: Arjun's card may replace his, never the other way round."""
    for price, caller in enumerate((RAVI, ARJUN), start=1):
        await assert_routed(db, "set_price", {"sku": _WRAP, "price": price}, caller, [PRIYA])


async def test_price_after_approval(db: Database) -> None:
    """After approval the product costs ₹299.00 and one PriceChange records 249 → 299."""
    registry = make_registry(db)
    proposal = await propose(registry, "set_price", {"sku": "paneer tikka", "price": 299}, PRIYA)
    decision = await approve(registry, proposal, PRIYA)
    assert decision.card.status is CardStatus.DONE, decision.error
    assert (await row(db, Product, 1)).price == 29900
    async with db.session() as session:
        change = (await session.scalars(select(PriceChange))).one()
    assert (change.product_id, change.old_price, change.new_price) == (1, 24900, 29900)
    assert (change.approved_by, change.card_id) == (1, proposal.card_id)


async def test_price_set_meanwhile_fails_at_execution(db: Database) -> None:
    """Two cards for ₹299: the second fails as already costing that, and no second ledger line."""
    registry = make_registry(db)
    first = await untargeted(
        db, await propose(registry, "set_price", {"sku": _WRAP, "price": 299}, PRIYA)
    )
    second = await propose(registry, "set_price", {"sku": _WRAP, "price": "299.00"}, PRIYA)
    assert (await approve(registry, first, PRIYA)).ok
    decision = await approve(registry, second, PRIYA)
    assert decision.card.status is CardStatus.FAILED
    assert "already costs ₹299.00" in str(decision.error)
    assert await count(db, PriceChange) == 1


async def test_price_round_trips_as_decimal(db: Database) -> None:
    """The price is sealed with the currency's decimals and reads back as that Decimal."""
    registry = make_registry(db)
    proposal = await propose(registry, "set_price", {"sku": "ff-paneer-wrap", "price": 299}, PRIYA)
    assert proposal.args == SetPriceArgs(sku=_WRAP, price=Decimal("299.00"))
    record = await registry.card(proposal.card_id)
    assert record is not None
    assert record.args == {"sku": _WRAP, "price": "299.00"}
    again = SetPriceArgs.model_validate(record.args)
    assert type(again.price) is Decimal
    assert again == proposal.args


async def test_dollar_price_card(db: Database) -> None:
    """Harbor Books prices are shown in dollars: $4.50 → $5.00."""
    proposal = await propose(
        make_registry(db), "set_price", {"sku": "HB-CARD-003", "price": 5}, SAM
    )
    assert details(proposal)["Price"] == "$4.50 → $5.00"
    assert details(proposal)["Change"] == "+11.1 %"
