"""Loads the demo merchants (Fiesta Foods and Harbor Books); loading twice changes nothing.

The data is deterministic: the same ids, names and amounts on every machine, with orders laid
over the 30 days before ``now`` so the sales summary always has something to say.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from tools.caller import Role
from tools.db import ConnectionRow, Database, PolicyRow
from tools.toolsets.merchant.models import (
    Branch,
    BranchRequest,
    Order,
    OrderStatus,
    Person,
    Product,
    RequestKind,
    RequestStatus,
    Stock,
    Tenant,
)

__all__ = ["DEMO_WORKSPACES", "FIESTA", "HARBOR", "DemoSummary", "load_demo"]

FIESTA, HARBOR = 1, 2

_PEOPLE = [
    (1, FIESTA, "Priya Raman", "priya@fiesta.example", Role.OWNER),
    (2, FIESTA, "Arjun Mehta", "arjun@fiesta.example", Role.MANAGER),
    (3, FIESTA, "Meera Iyer", "meera@fiesta.example", Role.MANAGER),
    (4, FIESTA, "Ravi Kumar", "ravi@fiesta.example", Role.STAFF),
    (5, HARBOR, "Sam Lee", "sam@harbor.example", Role.OWNER),
]
_BRANCHES = [
    (1, FIESTA, "Indiranagar", "Bengaluru", "open"),
    (2, FIESTA, "Koramangala", "Bengaluru", "open"),
    (3, FIESTA, "Whitefield", "Bengaluru", "open"),
    (4, FIESTA, "MG Road", "Bengaluru", "closed"),
    (5, HARBOR, "Downtown", "Portland", "open"),
    (6, HARBOR, "Waterfront", "Portland", "open"),
]
_PRODUCTS = [
    (1, FIESTA, "FF-PANEER-WRAP", "Paneer Tikka Wrap", 24900),
    (2, FIESTA, "FF-MASALA-DOSA", "Masala Dosa", 12000),
    (3, FIESTA, "FF-FILTER-COFFEE", "Filter Coffee", 6000),
    (4, FIESTA, "FF-MANGO-LASSI", "Mango Lassi", 9000),
    (5, FIESTA, "FF-VEG-BIRYANI", "Veg Biryani", 32000),
    (6, FIESTA, "FF-GULAB-JAMUN", "Gulab Jamun", 9000),
    (7, HARBOR, "HB-NOVEL-001", "The Long Tide (novel)", 1899),
    (8, HARBOR, "HB-ATLAS-002", "Coastal Atlas", 4500),
    (9, HARBOR, "HB-CARD-003", "Greeting Card", 450),
]
# (id, tenant, branch, kind, amount, requested_by, reason, status, decided_by, note, hours ago)
_REQUESTS = [
    (
        1,
        FIESTA,
        1,
        RequestKind.STOCK,
        1850000,
        4,
        "Paneer is running low before the weekend rush.",
        "pending",
        None,
        None,
        5,
    ),
    (
        2,
        FIESTA,
        2,
        RequestKind.REFUND,
        124000,
        4,
        "Customer found the biryani cold; asked for a refund.",
        "pending",
        None,
        None,
        9,
    ),
    (
        3,
        FIESTA,
        3,
        RequestKind.DISCOUNT,
        500000,
        4,
        "Corporate lunch for 40 people at a tech park next door.",
        "pending",
        None,
        None,
        20,
    ),
    (
        4,
        FIESTA,
        1,
        RequestKind.EXPENSE,
        780000,
        2,
        "Walk-in freezer compressor repair.",
        "pending",
        None,
        None,
        26,
    ),
    (
        5,
        FIESTA,
        3,
        RequestKind.STOCK,
        4200000,
        4,
        "Festival week stock-up: rice, paneer, ghee.",
        "pending",
        None,
        None,
        30,
    ),
    (
        6,
        FIESTA,
        2,
        RequestKind.EXPENSE,
        230000,
        4,
        "Replace the broken receipt printer at the counter.",
        "pending",
        None,
        None,
        48,
    ),
    (
        7,
        FIESTA,
        1,
        RequestKind.DISCOUNT,
        150000,
        4,
        "Loyalty discount for a regular's birthday party.",
        "approved",
        2,
        "Fine, once.",
        72,
    ),
    (
        8,
        FIESTA,
        4,
        RequestKind.EXPENSE,
        1200000,
        4,
        "Repaint the dining area.",
        "rejected",
        3,
        "MG Road is closed for renovation already.",
        96,
    ),
    (
        9,
        HARBOR,
        5,
        RequestKind.STOCK,
        35000,
        5,
        "Restock the atlas before the summer tourists.",
        "pending",
        None,
        None,
        12,
    ),
    (
        10,
        HARBOR,
        6,
        RequestKind.REFUND,
        2499,
        5,
        "Damaged copy returned by a customer.",
        "pending",
        None,
        None,
        30,
    ),
]
# Requests 11 to 15 are the README tour's own, so each of its steps has requests no earlier
# step used up: Arjun's batch (11, 12, 13) and Ravi's (14, 15). Walked in order on one demo,
# the tour once reached its batch with request 1 already approved in its first step, and
# "Approve all 3" never appeared. Kinds and branches differ from the tour's earlier requests,
# so nothing adds up to the two-approver amount.
_TOUR_REQUESTS = [
    (11, FIESTA, 2, RequestKind.STOCK, 320000, 4, "Filter coffee beans and milk for the week."),
    (12, FIESTA, 3, RequestKind.REFUND, 86000, 4, "An order came without its raita."),
    (13, FIESTA, 1, RequestKind.DISCOUNT, 150000, 4, "Weekday lunch offer for the office crowd."),
    (14, FIESTA, 3, RequestKind.EXPENSE, 450000, 4, "A new gas regulator for the tandoor."),
    (15, FIESTA, 1, RequestKind.REFUND, 64000, 4, "A card payment was charged twice."),
]
_REQUESTS += [(*r, "pending", None, None, 50 + 2 * n) for n, r in enumerate(_TOUR_REQUESTS)]
_CUSTOMERS = {
    FIESTA: [
        "Ananya S",
        "Karthik R",
        "Divya P",
        "Rohit M",
        "Sneha K",
        "Vikram N",
        "Lakshmi T",
        "Farhan A",
    ],
    HARBOR: ["Olivia B", "Noah C", "Emma D", "Liam F", "Ava G"],
}


# Fiesta Foods' approval policy: a manager countersigns every write (the owner, where a tool
# needs the owner), and two people from ₹25,000 on (request 5, ₹42,000, shows it). Request 4
# is Arjun's own, so under the default self-approval rule his card for it goes to Meera.
# Harbor Books is one person and keeps the default: Sam approves his own.
FIESTA_POLICY = {"approver_role": "manager", "two_approvers_from": 2_500_000}

# The local sandbox's two Slack workspaces (bot.sandbox.people names the same ids): the demo
# connects them, so `make run` reaches each merchant from its own workspace and no other.
DEMO_WORKSPACES = (("T0FIESTA", FIESTA), ("T0HARBOR", HARBOR))


@dataclass(frozen=True, slots=True)
class DemoSummary:
    loaded: bool
    tenants: int
    orders: int
    # Into a demo loaded before the tour had requests of its own: how many were added.
    tour_requests: int = 0


async def load_demo(db: Database, *, now: datetime | None = None) -> DemoSummary:
    """Loads both demo merchants unless they are there already."""
    now = now or datetime.now(UTC)
    async with db.session(write=True) as session, session.begin():
        if await session.get(Tenant, FIESTA) is not None:
            # A database loaded before connections (or policies) existed gets the sandbox's
            # workspaces and Fiesta's policy now, so `make run` keeps working on it.
            await _connect_demo_workspaces(session, now)
            await _demo_policy(session)
            # ... and the tour's own requests, which the README's steps name.
            added = await _add_tour_requests(session, now)
            return DemoSummary(loaded=False, tenants=2, orders=0, tour_requests=added)
        session.add_all(
            [
                Tenant(
                    id=FIESTA,
                    name="Fiesta Foods",
                    currency="INR",
                    locale="en_IN",
                    time_zone="Asia/Kolkata",
                ),
                Tenant(
                    id=HARBOR,
                    name="Harbor Books",
                    currency="USD",
                    locale="en_US",
                    time_zone="America/New_York",
                ),
            ]
        )
        session.add_all(
            Person(id=i, tenant_id=t, name=n, email=e, role=r) for i, t, n, e, r in _PEOPLE
        )
        session.add_all(
            Branch(
                id=i,
                tenant_id=t,
                name=n,
                city=c,
                status=s,
                status_changed_at=now - timedelta(days=20),
            )
            for i, t, n, c, s in _BRANCHES
        )
        session.add_all(
            Product(id=i, tenant_id=t, sku=s, name=n, price=p) for i, t, s, n, p in _PRODUCTS
        )
        await _connect_demo_workspaces(session, now)
        await _demo_policy(session)
        await session.flush()
        session.add_all(_stock())
        session.add_all(_requests(now))
        orders = _orders(now)
        session.add_all(orders)
        await _advance_sequences(session)
    return DemoSummary(loaded=True, tenants=2, orders=len(orders))


async def _connect_demo_workspaces(session: AsyncSession, now: datetime) -> None:
    for team, tenant in DEMO_WORKSPACES:
        if await session.get(ConnectionRow, ("slack", team)) is None:
            row = ConnectionRow(
                platform="slack", installation=team, tenant_id=tenant, connected_at=now
            )
            session.add(row)


async def _demo_policy(session: AsyncSession) -> None:
    if await session.get(PolicyRow, FIESTA) is None:
        session.add(PolicyRow(tenant_id=FIESTA, **FIESTA_POLICY))


async def _add_tour_requests(session: AsyncSession, now: datetime) -> int:
    """Adds the tour's requests a database loaded before them lacks; how many."""
    tour = {r[0] for r in _TOUR_REQUESTS}
    missing = [
        r for r in _requests(now) if r.id in tour and await session.get(BranchRequest, r.id) is None
    ]
    if missing:
        session.add_all(missing)
        await session.flush()
        await _advance_sequences(session)
    return len(missing)


def _stock() -> list[Stock]:
    rows: list[Stock] = []
    for branch, tenant, *_rest in _BRANCHES:
        for product, product_tenant, *_p in _PRODUCTS:
            if product_tenant == tenant:
                quantity = (branch * 7 + product * 13) % 60 + 5
                rows.append(
                    Stock(tenant_id=tenant, branch_id=branch, product_id=product, quantity=quantity)
                )
    return rows


def _requests(now: datetime) -> list[BranchRequest]:
    rows = []
    for i, tenant, branch, kind, amount, by, reason, status, decided_by, note, hours in _REQUESTS:
        created = now - timedelta(hours=hours)
        decided = created + timedelta(hours=3) if status != RequestStatus.PENDING else None
        rows.append(
            BranchRequest(
                id=i,
                tenant_id=tenant,
                branch_id=branch,
                kind=kind,
                amount=amount,
                requested_by=by,
                reason=reason,
                status=status,
                created_at=created,
                decided_by=decided_by,
                decided_at=decided,
                decision_note=note,
            )
        )
    return rows


def _orders(now: datetime) -> list[Order]:
    """About 90 orders over 30 days; the newest few are still open, one is refunded."""
    rng = random.Random(20261129)
    open_branches = {FIESTA: [1, 2, 3], HARBOR: [5, 6]}
    rows: list[Order] = []
    for tenant, count, low, high in ((FIESTA, 70, 15000, 250000), (HARBOR, 20, 450, 9000)):
        for n in range(count):
            age = timedelta(hours=(count - n) * (720 / count))
            status = OrderStatus.OPEN if age < timedelta(hours=18) else OrderStatus.FULFILLED
            total = rng.randrange(low, high, 100 if tenant == FIESTA else 1)
            rows.append(
                Order(
                    tenant_id=tenant,
                    branch_id=rng.choice(open_branches[tenant]),
                    customer=rng.choice(_CUSTOMERS[tenant]),
                    total=total,
                    refunded=0,
                    status=status,
                    note="",
                    created_at=now - age,
                )
            )
    rows[5].status, rows[5].refunded, rows[5].note = (
        OrderStatus.REFUNDED,
        rows[5].total,
        "Wrong address; refunded.",
    )
    rows[-25].note = "Leave at the gate."
    return rows


async def _advance_sequences(session: AsyncSession) -> None:
    """PostgreSQL's id sequences do not move for explicit ids; without this the next insert fails."""
    if session.get_bind().dialect.name != "postgresql":
        return
    for table in ("tenants", "people", "branches", "products", "branch_requests"):
        # Table names come from the constant tuple above, never from input.
        sql = (
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))"  # noqa: S608
        )
        await session.execute(text(sql))
