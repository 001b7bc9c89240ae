"""The merchant read tools against the demo data, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy import update as sa_update

from tools.audit.log import AuditLog, Outcome
from tools.caller import Caller, Role
from tools.cards.tokens import CardSigner, Clock
from tools.db import Database
from tools.errors import AmbiguousError, InvalidArgumentsError, NotFoundError
from tools.registry import Registry
from tools.tool import Result, Scope
from tools.toolsets.merchant import DEFAULT_AGENT, READ_ONLY_AGENT, READ_TOOLS, build_registry
from tools.toolsets.merchant.models import (
    Branch,
    BranchRequest,
    Order,
    OrderStatus,
    Person,
    Product,
    Refund,
    RequestKind,
    Tenant,
)
from tools.toolsets.merchant.reads_sales import Period

RAVI = Caller(userid=4, tenantid=1, role=Role.STAFF, name="Ravi Kumar")
SAM = Caller(userid=5, tenantid=2, role=Role.OWNER, name="Sam Lee")

# A Wednesday afternoon far from the demo data (laid over the 30 days before the test run), so
# sales in a period are only the orders a test puts there.
WEDNESDAY = datetime(2030, 1, 9, 15, 0, tzinfo=UTC)


def make_registry(db: Database, clock: Clock | None = None) -> Registry:
    signer = CardSigner(["test-secret"])
    return build_registry(db, signer, clock=clock) if clock else build_registry(db, signer)


@pytest.fixture
def registry(db: Database) -> Registry:
    return make_registry(db)


async def read(
    registry: Registry, tool: str, args: Mapping[str, Any] | None = None, caller: Caller = RAVI
) -> Result:
    return await registry.call(DEFAULT_AGENT, tool, args or {}, caller)


async def add_rows(db: Database, *rows: Any) -> None:
    """Inserts rows through a plain session, outside any tool, as another process would."""
    async with db.session() as session, session.begin():
        session.add_all(rows)


# ── the contract ─────────────────────────────────────────────────────────────────────────────


def test_read_tools_keep_their_names_and_arguments() -> None:
    """The tool names and argument names other surfaces code against stay exactly as agreed."""
    shapes = {tool.name: sorted(tool.args.model_fields) for tool in READ_TOOLS}
    assert shapes == {
        "list_branches": ["status"],
        "get_branch": ["branch"],
        "list_requests": ["branch", "kind", "status"],
        "get_request": ["request_id"],
        "list_orders": ["branch", "customer", "days", "status", "today"],
        "get_order": ["order_id"],
        "stock_levels": ["branch", "sku"],
        "sales_summary": ["branch", "period"],
    }
    for tool in READ_TOOLS:
        assert tool.scope is Scope.READ and tool.role is Role.STAFF
        assert all(field.description for field in tool.args.model_fields.values()), tool.name
        assert len(tool.description) > 30 and tool.description.endswith("."), tool.name


async def test_read_only_agent_reads(registry: Registry) -> None:
    """The read-only agent may call every read tool."""
    result = await registry.call(READ_ONLY_AGENT, "list_branches", {}, RAVI)
    assert result.count == 4


# ── branches ─────────────────────────────────────────────────────────────────────────────────


async def test_list_branches_shows_every_branch_with_counts(registry: Registry) -> None:
    """All four Fiesta branches, in id order, with their status and pending request counts."""
    result = await read(registry, "list_branches")
    assert result.scope == "Fiesta Foods: 4 branches"
    assert [(r["id"], r["name"], r["status"]) for r in result.rows] == [
        (1, "Indiranagar", "open"),
        (2, "Koramangala", "open"),
        (3, "Whitefield", "open"),
        (4, "MG Road", "closed"),
    ]
    # 11 to 15, the README tour's own requests, are pending at the three open branches too.
    assert [r["pending_requests"] for r in result.rows] == [4, 3, 4, 0]


async def test_list_branches_filters_by_status(registry: Registry) -> None:
    """status=closed lists only MG Road and says so in the scope line."""
    result = await read(registry, "list_branches", {"status": "closed"})
    assert [r["name"] for r in result.rows] == ["MG Road"]
    assert result.scope == "Fiesta Foods: 1 closed branch"


@pytest.mark.parametrize("ref", ["Whitefield", "whitefield", "White", "3", "#3", 3])
async def test_get_branch_resolves_names_prefixes_and_ids(registry: Registry, ref: object) -> None:
    """A branch is found by exact name, any case, a unique prefix, or its id in any spelling."""
    result = await read(registry, "get_branch", {"branch": ref})
    assert result.rows[0]["id"] == 3 and result.rows[0]["name"] == "Whitefield"
    assert result.scope == "Fiesta Foods: branch 3, Whitefield"


async def test_get_branch_counts_open_orders_and_pending_requests(
    db: Database, registry: Registry
) -> None:
    """get_branch counts the branch's open orders and pending requests, nobody else's."""
    await add_rows(
        db,
        Order(
            tenant_id=1,
            branch_id=2,
            customer="Walk-in",
            total=5000,
            status="open",
            created_at=datetime.now(UTC),
        ),
        Order(
            tenant_id=2,
            branch_id=5,
            customer="Walk-in",
            total=5000,
            status="open",
            created_at=datetime.now(UTC),
        ),
    )
    async with db.session() as session:
        stmt = select(func.count(Order.id)).where(Order.branch_id == 2, Order.status == "open")
        expected_open = int(await session.scalar(stmt) or 0)
    row = (await read(registry, "get_branch", {"branch": "Koramangala"})).rows[0]
    assert row["open_orders"] == expected_open >= 1
    assert row["pending_requests"] == 3  # requests 2 and 6, and the tour's 11


async def test_get_branch_ambiguous_prefix_lists_candidates(
    db: Database, registry: Registry
) -> None:
    """A prefix matching two branches is refused, naming both with their ids."""
    await add_rows(db, Branch(tenant_id=1, name="Indira Park", city="Mysuru", status="open"))
    with pytest.raises(AmbiguousError) as refused:
        await read(registry, "get_branch", {"branch": "indira"})
    assert "'indira' matches more than one branch" in str(refused.value)
    assert sorted(refused.value.candidates)[0].startswith("Indira Park (Mysuru, branch ")
    assert "Indiranagar (Bengaluru, branch 1)" in refused.value.candidates


async def test_get_branch_not_found_says_what_exists(registry: Registry) -> None:
    """An unknown name is refused with the merchant's own branch names, never another's."""
    with pytest.raises(NotFoundError) as refused:
        await read(registry, "get_branch", {"branch": "Downtown"})
    assert str(refused.value) == (
        "There is no branch called 'Downtown'. "
        "Branches: Indiranagar, Koramangala, Whitefield, MG Road."
    )
    with pytest.raises(NotFoundError, match=r"^There is no branch 5\."):
        await read(registry, "get_branch", {"branch": "5"})


@pytest.mark.parametrize("ref", ["²", "99999999999", "#4294967296"])
async def test_get_branch_odd_numbers_are_not_found(registry: Registry, ref: str) -> None:
    """Digits that are not an id are a "no such branch", not a crash. Property testing found
    both: "²" counts as a digit yet int() refuses it, and PostgreSQL rejects an id beyond 32
    bits with a driver error where SQLite quietly finds nothing."""
    with pytest.raises(NotFoundError, match="Branches: Indiranagar, Koramangala"):
        await read(registry, "get_branch", {"branch": ref})


@pytest.mark.parametrize("tool", ["get_request", "get_order"])
async def test_ids_beyond_32_bits_are_refused_as_arguments(registry: Registry, tool: str) -> None:
    """A request or order number too large to exist is refused by the schema on both databases,
    instead of reaching PostgreSQL as an out-of-range integer."""
    field = "request_id" if tool == "get_request" else "order_id"
    said = "request number" if tool == "get_request" else "order number"
    with pytest.raises(InvalidArgumentsError, match=said):
        await read(registry, tool, {field: 2**31})


# ── requests ─────────────────────────────────────────────────────────────────────────────────


async def test_list_requests_defaults_to_pending_newest_first(registry: Registry) -> None:
    """By default the eleven pending Fiesta requests come back newest first, fully described."""
    result = await read(registry, "list_requests")
    assert result.scope == "Fiesta Foods: 11 pending requests"
    assert [r["id"] for r in result.rows] == [1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15]
    first = result.rows[0]
    assert first["branch_id"] == 1 and first["branch"] == "Indiranagar"
    assert first["kind"] == "stock" and first["status"] == "pending"
    assert (first["amount"], first["amount_minor"]) == ("₹18,500.00", 1850000)
    assert (first["requested_by_id"], first["requested_by"]) == (4, "Ravi Kumar")
    assert first["reason"] == "Paneer is running low before the weekend rush."
    assert first["decided_by"] is None and first["decided_at"] is None
    assert result.rows[3]["requested_by"] == "Arjun Mehta"


async def test_list_requests_shows_decisions(registry: Registry) -> None:
    """Approved and rejected requests carry who decided, when and the note."""
    approved = (await read(registry, "list_requests", {"status": "approved"})).rows
    rejected = (await read(registry, "list_requests", {"status": "rejected"})).rows
    assert [(r["id"], r["decided_by"], r["decision_note"]) for r in approved] == [
        (7, "Arjun Mehta", "Fine, once.")
    ]
    assert [(r["id"], r["decided_by_id"], r["decided_by"]) for r in rejected] == [
        (8, 3, "Meera Iyer")
    ]
    assert rejected[0]["decided_at"] is not None and rejected[0]["amount"] == "₹12,000.00"
    everything = await read(registry, "list_requests", {"status": None})
    assert (
        everything.count == 13 and everything.scope == "Fiesta Foods: 13 requests of every status"
    )


async def test_list_requests_filters_by_branch_and_kind(registry: Registry) -> None:
    """Branch (by name or id) and kind narrow the list and are named in the scope line."""
    result = await read(registry, "list_requests", {"branch": "Whitefield", "kind": "stock"})
    assert [r["id"] for r in result.rows] == [5]
    assert result.scope == "Fiesta Foods: 1 pending request at Whitefield of kind stock"
    by_id = await read(registry, "list_requests", {"branch": 2, "kind": RequestKind.EXPENSE})
    assert [r["id"] for r in by_id.rows] == [6]


async def test_list_requests_caps_at_fifty_with_true_count(
    db: Database, registry: Registry
) -> None:
    """Past 50 rows the list is cut, the count stays true and the scope line says truncated."""
    now = datetime.now(UTC)
    await add_rows(
        db,
        *(
            BranchRequest(
                tenant_id=1,
                branch_id=1,
                kind="expense",
                amount=1000 + i,
                requested_by=4,
                reason=f"Extra {i}",
                status="pending",
                created_at=now - timedelta(minutes=i),
            )
            for i in range(60)
        ),
    )
    result = await read(registry, "list_requests")
    assert result.count == 71 and len(result.rows) == 50
    assert result.scope == (
        "Fiesta Foods: 50 of 71 pending requests (truncated; narrow the search to see the rest)"
    )
    assert [r["reason"] for r in result.rows[:2]] == ["Extra 0", "Extra 1"]
    harbor = await read(registry, "list_requests", caller=SAM)
    assert harbor.count == 2 and harbor.scope == "Harbor Books: 2 pending requests"


async def test_get_request_shows_one_request(registry: Registry) -> None:
    """get_request describes one request; Harbor's shows in dollars."""
    result = await read(registry, "get_request", {"request_id": 8})
    row = result.rows[0]
    assert result.scope == "Fiesta Foods: request 8 from MG Road"
    assert (row["branch"], row["status"], row["decided_by"]) == (
        "MG Road",
        "rejected",
        "Meera Iyer",
    )
    assert row["decision_note"] == "MG Road is closed for renovation already."
    harbor = await read(registry, "get_request", {"request_id": 9}, caller=SAM)
    assert harbor.rows[0]["amount"] == "$350.00" and harbor.rows[0]["requested_by"] == "Sam Lee"


async def test_get_request_of_another_merchant_is_not_found(registry: Registry) -> None:
    """Harbor's request 9 does not exist for a Fiesta caller."""
    with pytest.raises(NotFoundError) as refused:
        await read(registry, "get_request", {"request_id": 9})
    assert (
        str(refused.value) == 'There is no request 9. Say "pending requests" to see their numbers.'
    )


# ── orders ───────────────────────────────────────────────────────────────────────────────────


async def fiesta_orders_since(db: Database, since: datetime) -> list[Order]:
    async with db.session() as session:
        stmt = select(Order).where(Order.tenant_id == 1, Order.created_at >= since)
        return list((await session.scalars(stmt)).all())


async def test_list_orders_last_30_days_is_capped(db: Database) -> None:
    """Thirty days of demo orders exceed 50: 50 newest rows, the true count, a truncated scope."""
    now = datetime.now(UTC)
    registry = make_registry(db, lambda: now)
    expected = await fiesta_orders_since(db, now - timedelta(days=30))
    result = await read(registry, "list_orders")
    assert result.count == len(expected) > 50 and len(result.rows) == 50
    assert result.scope == (
        f"Fiesta Foods: 50 of {len(expected)} orders in the last 30 days "
        "(truncated; narrow the search to see the rest)"
    )
    stamps = [r["created_at"] for r in result.rows]
    assert stamps == sorted(stamps, reverse=True)
    newest = max(expected, key=lambda o: o.created_at)
    assert result.rows[0]["id"] == newest.id


async def test_list_orders_filters_customer_case_insensitively(db: Database) -> None:
    """customer matches a substring in any case; % and _ are plain characters, not wildcards."""
    now = datetime.now(UTC)
    registry = make_registry(db, lambda: now)
    expected = [
        o
        for o in await fiesta_orders_since(db, now - timedelta(days=365))
        if "ananya" in o.customer.lower()
    ]
    result = await read(registry, "list_orders", {"customer": "ANANYA", "days": 365})
    assert result.count == len(expected) > 0
    assert {r["customer"] for r in result.rows} == {"Ananya S"}
    assert "for customers matching 'ANANYA'" in result.scope
    for wildcard in ("%", "_"):
        assert (await read(registry, "list_orders", {"customer": wildcard, "days": 365})).count == 0


async def test_list_orders_filters_status_and_branch(db: Database, registry: Registry) -> None:
    """status and branch narrow the list; the refunded demo order shows its note and amounts."""
    async with db.session() as session:
        refunded = await session.scalar(
            select(Order).where(Order.tenant_id == 1, Order.status == "refunded")
        )
    assert refunded is not None
    result = await read(registry, "list_orders", {"status": "refunded", "days": 365})
    assert [r["id"] for r in result.rows] == [refunded.id]
    row = result.rows[0]
    assert row["note"] == "Wrong address; refunded." and row["refunded_minor"] == refunded.total
    elsewhere = 2 if refunded.branch_id != 2 else 3
    other = await read(
        registry, "list_orders", {"status": "refunded", "days": 365, "branch": elsewhere}
    )
    assert other.count == 0


@pytest.mark.parametrize("days", [0, 366])
async def test_list_orders_refuses_days_out_of_range(registry: Registry, days: int) -> None:
    """days must be 1 to 365; anything else is refused before any query."""
    with pytest.raises(InvalidArgumentsError, match="days"):
        await read(registry, "list_orders", {"days": days})


async def test_get_order_shows_refunds_and_what_is_left(db: Database, registry: Registry) -> None:
    """get_order reports total, refunded, refundable left and every refund with its approver."""
    now = datetime.now(UTC)
    order = Order(
        tenant_id=1,
        branch_id=2,
        customer="Divya P",
        total=250000,
        refunded=50000,
        status="fulfilled",
        note="Late delivery",
        created_at=now - timedelta(hours=3),
    )
    await add_rows(db, order)
    await add_rows(
        db,
        Refund(
            tenant_id=1,
            order_id=order.id,
            amount=50000,
            reason="Cold food",
            approved_by=3,
            card_id="card-refund-1",
            created_at=now - timedelta(hours=1),
        ),
    )
    result = await read(registry, "get_order", {"order_id": order.id})
    row = result.rows[0]
    assert result.scope == f"Fiesta Foods: order {order.id} at Koramangala"
    assert (row["total"], row["refunded"], row["refundable"]) == (
        "₹2,500.00",
        "₹500.00",
        "₹2,000.00",
    )
    assert row["refundable_minor"] == 200000 and row["note"] == "Late delivery"
    assert [(r["amount"], r["approved_by"], r["reason"]) for r in row["refunds"]] == [
        ("₹500.00", "Meera Iyer", "Cold food")
    ]


async def test_get_order_of_another_merchant_is_not_found(db: Database, registry: Registry) -> None:
    """A Harbor order id is not found for a Fiesta caller, and the message says what to do."""
    async with db.session() as session:
        harbor_order = await session.scalar(select(func.min(Order.id)).where(Order.tenant_id == 2))
    with pytest.raises(NotFoundError) as refused:
        await read(registry, "get_order", {"order_id": harbor_order})
    assert str(refused.value) == (
        f"There is no order {harbor_order}. "
        'Say "orders" to see the recent orders and their numbers.'
    )


# ── stock ────────────────────────────────────────────────────────────────────────────────────


async def test_stock_levels_lists_every_branch_and_product(registry: Registry) -> None:
    """Four branches by six products, each with SKU, name and quantity."""
    result = await read(registry, "stock_levels")
    assert result.count == 24 and result.scope == "Fiesta Foods: 24 stock levels"
    assert result.rows[1] == {
        "branch_id": 1,
        "branch": "Indiranagar",
        "branch_status": "open",
        "product_id": 2,
        "sku": "FF-MASALA-DOSA",
        "product": "Masala Dosa",
        "quantity": 38,
    }


@pytest.mark.parametrize("sku", ["FF-MASALA-DOSA", "ff-masala-dosa", "Masala Dosa", "masala"])
async def test_stock_levels_narrows_to_one_product(registry: Registry, sku: str) -> None:
    """A product by SKU in any case or by name, at one branch, is one row."""
    result = await read(registry, "stock_levels", {"branch": "Koramangala", "sku": sku})
    assert [(r["branch"], r["sku"], r["quantity"]) for r in result.rows] == [
        ("Koramangala", "FF-MASALA-DOSA", 45)
    ]
    assert (
        result.scope
        == "Fiesta Foods: 1 stock level at Koramangala for FF-MASALA-DOSA (Masala Dosa)"
    )


async def test_stock_levels_of_another_merchants_sku_is_not_found(registry: Registry) -> None:
    """Harbor's SKU means nothing to a Fiesta caller."""
    with pytest.raises(NotFoundError, match=r"^There is no product called 'HB-ATLAS-002'\."):
        await read(registry, "stock_levels", {"sku": "HB-ATLAS-002"})


# ── sales ────────────────────────────────────────────────────────────────────────────────────


def sale(
    branch: int,
    total: int,
    at: datetime,
    *,
    refunded: int = 0,
    status: str = "fulfilled",
    tenant: int = 1,
) -> Order:
    return Order(
        tenant_id=tenant,
        branch_id=branch,
        customer="Walk-in",
        total=total,
        refunded=refunded,
        status=status,
        created_at=at,
    )


@pytest.fixture
async def week_of_sales(db: Database) -> Registry:
    """Orders placed around WEDNESDAY, and a registry whose clock stands at WEDNESDAY, for
    merchants keeping UTC days (the windows below are UTC's; a zone of their own is pinned
    by the tests after them)."""
    at = WEDNESDAY.replace
    await _set_zones(db, "UTC")
    await add_rows(
        db,
        sale(1, 100000, at(hour=10)),
        # Monday 00:00 exactly, the first instant of this_week; then Sunday night, last week.
        sale(1, 250000, at(day=7, hour=0), refunded=50000),
        sale(2, 70000, at(day=6, hour=23)),
        sale(2, 1850000, at(day=1, hour=9)),
        sale(3, 30000, at(year=2029, month=12, day=20, hour=12)),
        sale(1, 999900, at(hour=11), status="cancelled"),
        sale(5, 777700, at(hour=9), tenant=2),
    )
    return make_registry(db, lambda: WEDNESDAY)


async def _set_zones(db: Database, zone: str) -> None:
    async with db.session(write=True) as session, session.begin():
        await session.execute(sa_update(Tenant).values(time_zone=zone))


async def test_a_merchants_today_and_week_are_its_own_days(db: Database) -> None:
    """Fiesta Foods keeps Bengaluru's days: at 02:00 on a Thursday there (20:30 UTC the day
    before), "today" starts at its midnight, not UTC's, and the note names the zone; it
    once said "orders today (since 00:00 UTC)" for a shop in Bengaluru."""
    thursday = datetime(2030, 1, 9, 20, 30, tzinfo=UTC)  # Thu 10 Jan, 02:00 in Kolkata
    await add_rows(
        db,
        sale(1, 100000, datetime(2030, 1, 9, 18, 45, tzinfo=UTC)),  # 00:15 Thursday there
        sale(1, 200000, datetime(2030, 1, 9, 17, 0, tzinfo=UTC)),  # 22:30 Wednesday there
    )
    registry = make_registry(db, lambda: thursday)
    today = await read(registry, "sales_summary", {"period": "today", "branch": 1})
    assert [r["orders"] for r in today.rows] == [1]
    assert today.note.startswith(
        "Total today (2030-01-10 00:00 Asia/Kolkata to 2030-01-10 02:00 Asia/Kolkata): 1 order"
    )
    orders = await read(registry, "list_orders", {"today": True, "branch": 1})
    assert "today (since 00:00 Asia/Kolkata)" in orders.scope
    assert orders.count == 1


@pytest.mark.parametrize(
    ("period", "per_branch", "totals"),
    [
        ("today", [1, 0, 0, 0], "1 order, gross ₹1,000.00, refunded ₹0.00, net ₹1,000.00"),
        ("this_week", [2, 0, 0, 0], "2 orders, gross ₹3,500.00, refunded ₹500.00, net ₹3,000.00"),
        ("last_7_days", [2, 1, 0, 0], "3 orders, gross ₹4,200.00, refunded ₹500.00, net ₹3,700.00"),
        (
            "this_month",
            [2, 2, 0, 0],
            "4 orders, gross ₹22,700.00, refunded ₹500.00, net ₹22,200.00",
        ),
        (
            "last_30_days",
            [2, 2, 1, 0],
            "5 orders, gross ₹23,000.00, refunded ₹500.00, net ₹22,500.00",
        ),
    ],
)
async def test_sales_summary_periods_are_utc_calendar_windows(
    week_of_sales: Registry, period: str, per_branch: list[int], totals: str
) -> None:
    """Each period starts where documented (this_week on Monday 00:00 UTC); cancelled orders
    and other merchants' sales are left out."""
    result = await read(week_of_sales, "sales_summary", {"period": period})
    assert [r["orders"] for r in result.rows] == per_branch
    assert result.note.split(": ", 1)[1].startswith(totals + ".")
    assert result.scope.startswith("Fiesta Foods: 4 branches")


async def test_sales_summary_defaults_to_this_week_per_branch(week_of_sales: Registry) -> None:
    """The default period is this week; a branch row shows gross, refunded and net both ways."""
    result = await read(week_of_sales, "sales_summary", {"branch": "Indiranagar"})
    assert result.rows == [
        {
            "branch_id": 1,
            "branch": "Indiranagar",
            "branch_status": "open",
            "orders": 2,
            "gross": "₹3,500.00",
            "gross_minor": 350000,
            "refunded": "₹500.00",
            "refunded_minor": 50000,
            "net": "₹3,000.00",
            "net_minor": 300000,
        }
    ]
    assert result.scope == "Fiesta Foods: 1 branch (sales this week)"
    assert result.note.startswith(
        "Total this week (2030-01-07 00:00 UTC to 2030-01-09 15:00 UTC): 2 orders, gross ₹3,500.00"
    )


async def test_sales_summary_for_one_branch_totals_only_that_branch(
    week_of_sales: Registry,
) -> None:
    """With a branch given, the totals are that branch's, not the merchant's."""
    result = await read(week_of_sales, "sales_summary", {"branch": 2, "period": "this_month"})
    assert [r["branch"] for r in result.rows] == ["Koramangala"]
    assert "2 orders, gross ₹19,200.00, refunded ₹0.00, net ₹19,200.00." in result.note


async def test_sales_summary_in_dollars_for_harbor(week_of_sales: Registry) -> None:
    """Harbor's summary is in US dollars and holds only Harbor's order."""
    result = await read(week_of_sales, "sales_summary", {"period": "today"}, caller=SAM)
    assert [(r["branch"], r["gross"]) for r in result.rows] == [
        ("Downtown", "$7,777.00"),
        ("Waterfront", "$0.00"),
    ]


# ── audit and arguments ──────────────────────────────────────────────────────────────────────


async def test_reads_are_audited(db: Database, registry: Registry) -> None:
    """A read leaves an audit row with who, which tool, the resolved arguments and row count."""
    await read(registry, "list_requests", {"branch": "Indiranagar"})
    [entry] = await AuditLog(db).recent(tenantid=1, limit=1)
    assert (entry.tool, entry.scope, entry.outcome) == ("list_requests", "read", Outcome.OK)
    assert (entry.user_id, entry.agent, entry.rows) == (4, DEFAULT_AGENT.name, 4)
    assert entry.args == {"status": "pending", "branch": "Indiranagar", "kind": None}


async def test_refused_reads_are_audited(db: Database, registry: Registry) -> None:
    """A read that finds nothing is audited as refused, with the message the person saw."""
    with pytest.raises(NotFoundError):
        await read(registry, "get_request", {"request_id": 10})
    [entry] = await AuditLog(db).recent(tenantid=1, limit=1)
    assert (entry.tool, entry.outcome) == ("get_request", Outcome.REFUSED)
    assert entry.detail.startswith("There is no request 10.")


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("get_branch", {"branch": "Indira\x00nagar"}),
        ("get_branch", {"branch": "   "}),
        ("list_requests", {"kind": "bribe"}),
        ("list_orders", {"customer": "x", "since": "yesterday"}),
        ("sales_summary", {"period": "this_year"}),
    ],
)
async def test_bad_arguments_are_refused(
    registry: Registry, tool: str, args: dict[str, Any]
) -> None:
    """Control characters, blanks, unknown values and unknown fields are refused the same way on
    both databases, before any query runs."""
    with pytest.raises(InvalidArgumentsError):
        await read(registry, tool, args)


# ── no read crosses merchants ────────────────────────────────────────────────────────────────

BRANCH_NAMES = ["Indiranagar", "Koramangala", "Whitefield", "MG Road", "Downtown", "Waterfront"]
SKUS = [
    "FF-PANEER-WRAP",
    "FF-MASALA-DOSA",
    "FF-VEG-BIRYANI",
    "HB-NOVEL-001",
    "HB-ATLAS-002",
    "HB-CARD-003",
    "Coastal Atlas",
    "Masala Dosa",
    "greeting",
]
CUSTOMERS = ["Ananya", "karthik", "Olivia B", "noah", "a"]
plain_text = st.text(
    st.characters(categories=("L", "N", "P", "Zs")), min_size=1, max_size=12
).filter(str.strip)
branch_refs = st.one_of(
    st.sampled_from(BRANCH_NAMES),
    st.sampled_from(BRANCH_NAMES).map(lambda name: name[:3].lower()),
    st.integers(1, 8).map(str),
    st.integers(1, 8).map(lambda i: f"#{i}"),
    plain_text,
)
maybe = st.none
ARGUMENTS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "list_branches": st.fixed_dictionaries(
        {},
        optional={
            "status": st.sampled_from(["open", "closed"]),
        },
    ),
    "get_branch": st.fixed_dictionaries({"branch": branch_refs}),
    "list_requests": st.fixed_dictionaries(
        {},
        optional={
            "status": st.sampled_from(["pending", "approved", "rejected", None]),
            "branch": maybe() | branch_refs,
            "kind": maybe() | st.sampled_from(list(RequestKind)),
        },
    ),
    "get_request": st.fixed_dictionaries({"request_id": st.integers(1, 12)}),
    "list_orders": st.fixed_dictionaries(
        {},
        optional={
            "branch": maybe() | branch_refs,
            "status": maybe() | st.sampled_from(list(OrderStatus)),
            "customer": maybe() | st.sampled_from(CUSTOMERS) | plain_text,
            "days": st.integers(1, 365),
        },
    ),
    "get_order": st.fixed_dictionaries({"order_id": st.integers(1, 100)}),
    "stock_levels": st.fixed_dictionaries(
        {},
        optional={
            "branch": maybe() | branch_refs,
            "sku": maybe() | st.sampled_from(SKUS),
        },
    ),
    "sales_summary": st.fixed_dictionaries(
        {},
        optional={
            "branch": maybe() | branch_refs,
            "period": st.sampled_from(list(get_args(Period))),
        },
    ),
}
# Which table a row's "id" names, per tool; the other id fields name the same table everywhere.
ROW_ID_TABLE = {
    "list_branches": Branch,
    "get_branch": Branch,
    "list_requests": BranchRequest,
    "get_request": BranchRequest,
    "list_orders": Order,
    "get_order": Order,
}
FIELD_TABLES: dict[str, type[Any]] = {
    "branch_id": Branch,
    "product_id": Product,
    "requested_by_id": Person,
    "decided_by_id": Person,
    "approved_by_id": Person,
}


class Owners:
    """Which tenant owns every id and every name in the database, read outside any tool."""

    def __init__(self) -> None:
        self.ids: dict[tuple[type[Any], int], int] = {}
        self.names: dict[str, int] = {}

    @classmethod
    async def load(cls, db: Database) -> Owners:
        owners = cls()
        async with db.session() as session:
            for model in (Branch, BranchRequest, Order, Product, Person, Refund):
                for row_id, tenant in await session.execute(select(model.id, model.tenant_id)):
                    owners.ids[model, row_id] = tenant
            for model, column in (
                (Branch, Branch.name),
                (Person, Person.name),
                (Product, Product.sku),
                (Product, Product.name),
                (Order, Order.customer),
            ):
                for name, tenant in await session.execute(select(column, model.tenant_id)):
                    owners.names[name] = tenant
        return owners

    def foreign_names(self, tenant: int) -> set[str]:
        return {name for name, owner in self.names.items() if owner != tenant}

    def check_row(self, tool: str, row: Mapping[str, Any], tenant: int) -> None:
        for key, value in _id_fields(tool, row):
            if value is not None:
                assert self.ids[key, value] == tenant, (tool, key.__name__, value)
        leaked = {v for v in row.values() if isinstance(v, str)} & self.foreign_names(tenant)
        assert not leaked, (tool, leaked)
        for refund in row.get("refunds", []):
            assert self.ids[Refund, refund["id"]] == tenant
            assert self.ids[Person, refund["approved_by_id"]] == tenant


def _id_fields(tool: str, row: Mapping[str, Any]) -> Iterator[tuple[type[Any], Any]]:
    if tool in ROW_ID_TABLE:
        yield ROW_ID_TABLE[tool], row["id"]
    for field, model in FIELD_TABLES.items():
        if field in row:
            yield model, row[field]


def _check_refusal(
    error: NotFoundError | AmbiguousError, args: Mapping[str, Any], foreign: set[str]
) -> None:
    """A refusal may repeat what was asked, but must name nothing of another merchant's."""
    message = str(error)
    for value in args.values():
        if isinstance(value, str):
            message = message.replace(repr(value.strip()), "")
    assert not {name for name in foreign if name in message}, message


@pytest.fixture
async def owners(db: Database) -> Owners:
    return await Owners.load(db)


# One database serves every example of a test on purpose: reads change nothing in it (the audit
# log only grows), so a fresh database per example would cost time and prove nothing more.
@pytest.mark.parametrize("tool", sorted(ARGUMENTS))
@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(caller=st.sampled_from([RAVI, SAM]), data=st.data())
async def test_no_read_returns_another_merchants_rows(
    registry: Registry, owners: Owners, tool: str, caller: Caller, data: st.DataObject
) -> None:
    """Whatever names, ids or SKUs of either merchant are asked for, every id and name in a read
    belongs to the caller's merchant, or the read is refused without naming the other's data."""
    args = data.draw(ARGUMENTS[tool], label="args")
    try:
        result = await read(registry, tool, args, caller)
    except (NotFoundError, AmbiguousError) as refused:
        _check_refusal(refused, args, owners.foreign_names(caller.tenantid))
        return
    assert result.scope.startswith(("Fiesta Foods: ", "Harbor Books: ")[caller.tenantid - 1])
    for row in result.rows:
        owners.check_row(tool, row, caller.tenantid)
