"""Every read and write tool, for both demo merchants: the other merchant's ids and names are not found."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text

from tools import Caller, CardSigner, CardStatus, Registry, Role
from tools.db import Database
from tools.errors import NotFoundError, NotYourCardError
from tools.toolsets.merchant import DEFAULT_AGENT, READ_TOOLS, WRITE_TOOLS, build_registry

SECRET = "tenant-isolation-secret-0123456789"
PRIYA = Caller(1, 1, Role.OWNER, "Priya Raman")  # Fiesta Foods
SAM = Caller(5, 2, Role.OWNER, "Sam Lee")  # Harbor Books

# What each merchant owns that the other must never reach: a branch (id and name), a request,
# a product's SKU, and (filled from the database) an order.
OWN = {
    1: {"branch": 3, "branch_name": "Whitefield", "request": 3, "sku": "FF-MASALA-DOSA"},
    2: {"branch": 5, "branch_name": "Downtown", "request": 9, "sku": "HB-ATLAS-002"},
}


def _foreign_calls(
    mine: dict[str, Any], theirs: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """Each tool called with the other merchant's ids and names (and the caller's own elsewhere)."""
    return [
        ("get_branch", {"branch": theirs["branch"]}),
        ("get_branch", {"branch": theirs["branch_name"]}),
        ("list_requests", {"branch": theirs["branch"]}),
        ("get_request", {"request_id": theirs["request"]}),
        ("list_orders", {"branch": theirs["branch_name"]}),
        ("get_order", {"order_id": theirs["order"]}),
        ("stock_levels", {"branch": theirs["branch"]}),
        ("sales_summary", {"branch": theirs["branch_name"]}),
        ("approve_request", {"request_id": theirs["request"]}),
        ("reject_request", {"request_id": theirs["request"], "reason": "no"}),
        ("close_branch", {"branch": theirs["branch"]}),
        ("close_branch", {"branch": theirs["branch_name"]}),
        ("reopen_branch", {"branch": theirs["branch_name"]}),
        ("refund_order", {"order_id": theirs["order"]}),
        (
            "adjust_stock",
            {"branch": mine["branch"], "sku": theirs["sku"], "delta": 1, "reason": "x"},
        ),
        (
            "adjust_stock",
            {"branch": theirs["branch"], "sku": mine["sku"], "delta": 1, "reason": "x"},
        ),
        ("set_price", {"sku": theirs["sku"], "price": "1.00"}),
    ]


@pytest.fixture
async def registry(db: Database) -> Registry:
    return build_registry(db, CardSigner([SECRET], ttl=timedelta(minutes=30)))


async def _owned(db: Database) -> dict[int, dict[str, Any]]:
    owned = {tenant: dict(values) for tenant, values in OWN.items()}
    async with db.session() as session:
        for tenant, values in owned.items():
            sql = text("SELECT min(id) FROM orders WHERE tenant_id = :t")
            values["order"] = int(await session.scalar(sql, {"t": tenant}) or 0)
    return owned


async def _state(db: Database) -> list[Any]:
    tables = ("branch_requests", "branches", "orders", "products", "stock", "proposals")
    async with db.session() as session:
        return [
            [tuple(r) for r in await session.execute(text(f"SELECT * FROM {t} ORDER BY id"))]
            for t in tables
        ]


def test_every_tool_is_covered() -> None:
    """The calls below name every read and write tool the registry offers."""
    named = {name for name, _ in _foreign_calls(OWN[1] | {"order": 1}, OWN[2] | {"order": 1})}
    assert named == {tool.name for tool in [*READ_TOOLS, *WRITE_TOOLS]} - {"list_branches"}


@pytest.mark.parametrize(
    ("caller", "other"), [(PRIYA, SAM), (SAM, PRIYA)], ids=["fiesta", "harbor"]
)
async def test_the_other_merchants_rows_are_not_found(
    registry: Registry, db: Database, caller: Caller, other: Caller
) -> None:
    """Naming the other merchant's branch, request, order or SKU in any tool is NotFoundError, never a row or a card."""
    owned = await _owned(db)
    before = await _state(db)
    for name, args in _foreign_calls(owned[caller.tenantid], owned[other.tenantid]):
        with pytest.raises(NotFoundError):
            await registry.call(DEFAULT_AGENT, name, args, caller)
    listed = await registry.call(DEFAULT_AGENT, "list_branches", {}, caller)
    assert owned[other.tenantid]["branch_name"] not in str(listed.rows)
    assert await _state(db) == before


@pytest.mark.parametrize(
    ("owner", "presser"), [(PRIYA, SAM), (SAM, PRIYA)], ids=["fiesta", "harbor"]
)
async def test_a_card_cannot_be_approved_by_the_other_merchant(
    registry: Registry, db: Database, owner: Caller, presser: Caller
) -> None:
    """A card minted for one merchant's owner is refused when the other merchant's owner presses it."""
    request = OWN[owner.tenantid]["request"]
    proposal = (
        await registry.call(DEFAULT_AGENT, "approve_request", {"request_id": request}, owner)
    ).proposal
    assert proposal is not None
    with pytest.raises(NotYourCardError):
        await registry.approve(DEFAULT_AGENT, proposal.card, presser)
    with pytest.raises(NotYourCardError):
        await registry.reject(DEFAULT_AGENT, proposal.card, presser, "not mine")
    record = await registry.card(proposal.card_id)
    assert record is not None and record.status is CardStatus.PENDING
    async with db.session() as session:
        sql = text("SELECT status FROM branch_requests WHERE id = :r")
        assert await session.scalar(sql, {"r": request}) == "pending"
