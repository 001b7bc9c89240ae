"""Every kind of statement a tenant session can run: none reads or changes the other merchant's rows.

A Fiesta Foods session once reached Harbor Books' rows through a Core ``select`` over the table,
``text()``, an ORM bulk UPDATE by primary key and an INSERT naming tenant 2; only ORM statements
were scoped. Each kind below is aimed squarely at the other merchant; the statement is either
limited to the session's tenant or refused as a bug (``TenantScopeError``).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from tools.db import Database
from tools.db.tenancy import TenantScopeError
from tools.toolsets.merchant.models import Branch, Order, Product, Stock

_TABLES = ("branches", "branch_requests", "orders", "products", "stock", "people", "refunds")
_names = itertools.count()

# A statement run in a session of ``mine`` aimed at ``theirs``' row ``target`` (an id of theirs
# in the table the kind is about); returns the tenant ids of whatever rows it read.
Attack = Callable[[AsyncSession, int, int, int], Awaitable[list[int]]]


async def _orm_select(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    rows = await s.scalars(select(Order).where(Order.tenant_id == theirs))
    return [o.tenant_id for o in rows] + [o.tenant_id for o in [await s.get(Order, target)] if o]


async def _core_select(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    orders = Order.__table__
    rows = await s.execute(select(orders.c.tenant_id).where(orders.c.id == target))
    every = await s.execute(select(orders))
    return [r.tenant_id for r in rows] + [r.tenant_id for r in every]


async def _join(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    o, b = Order.__table__, Branch.__table__
    core = select(o.c.tenant_id, b.c.tenant_id).join(b, b.c.id == o.c.branch_id)
    orm = select(Order.tenant_id, Branch.tenant_id).join(Branch, Branch.id == Order.branch_id)
    rows = [*await s.execute(core), *await s.execute(orm.where(Order.id == target))]
    return [tenant for row in rows for tenant in row]


async def _text(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    rows = await s.execute(text("SELECT tenant_id FROM orders WHERE id = :id"), {"id": target})
    return [int(r[0]) for r in rows]


async def _bulk_update_by_pk(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    await s.execute(update(Product), [{"id": target, "price": 1}])
    return []


async def _core_update_delete(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    products, stock = Product.__table__, Stock.__table__
    await s.execute(update(products).where(products.c.id == target).values(price=2))
    await s.execute(update(Product).where(Product.tenant_id == theirs).values(price=3))
    await s.execute(delete(stock).where(stock.c.product_id == target))
    return []


async def _insert_for_them(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    name = f"Annexe {next(_names)}"
    await s.execute(insert(Branch).values(tenant_id=theirs, name=name, city="X", status="open"))
    return []


async def _insert_without_tenant(s: AsyncSession, mine: int, theirs: int, target: int) -> list[int]:
    name = f"Annexe {next(_names)}"
    await s.execute(insert(Branch.__table__).values(name=name, city="X", status="open"))
    return []


ATTACKS: dict[str, tuple[str, Attack]] = {
    "orm select": ("orders", _orm_select),
    "core select": ("orders", _core_select),
    "join": ("orders", _join),
    "text": ("orders", _text),
    "orm bulk update by pk": ("products", _bulk_update_by_pk),
    "core update and delete": ("products", _core_update_delete),
    "insert for the other tenant": ("branches", _insert_for_them),
    "insert without a tenant": ("branches", _insert_without_tenant),
}


async def _rows_of(db: Database, tenant: int) -> list[list[tuple[Any, ...]]]:
    async with db.session() as session:
        return [
            [
                tuple(row)
                for row in await session.execute(
                    text(f"SELECT * FROM {table} WHERE tenant_id = :t ORDER BY id"),
                    {"t": tenant},
                )
            ]
            for table in _TABLES
        ]


async def _ids(db: Database, table: str, tenant: int) -> list[int]:
    async with db.session() as session:
        sql = text(f"SELECT id FROM {table} WHERE tenant_id = :t ORDER BY id")
        return [int(i) for i in await session.scalars(sql, {"t": tenant})]


@pytest.mark.parametrize("kind", sorted(ATTACKS))
@settings(
    max_examples=6,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(mine=st.sampled_from([1, 2]), data=st.data())
async def test_no_statement_reaches_the_other_tenant(
    db: Database, kind: str, mine: int, data: st.DataObject
) -> None:
    """Each kind of statement, aimed at the other merchant, reads only the session's rows and
    leaves the other merchant's rows as they were, or is refused as a bug."""
    theirs = 3 - mine
    table, attack = ATTACKS[kind]
    target = data.draw(st.sampled_from(await _ids(db, table, theirs)), label="their id")
    before = await _rows_of(db, theirs)
    read: list[int] = []
    try:
        async with db.tenant_session(mine, write=True) as session, session.begin():
            read = await attack(session, mine, theirs, target)
    except TenantScopeError:
        pass
    assert set(read) <= {mine}
    assert await _rows_of(db, theirs) == before


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_own_rows_are_still_reached_by_every_kind_that_is_scoped(db: Database) -> None:
    """Scoping limits, it does not blind: a Core select, a join and an insert with the session's
    own tenant id see and store the session's rows."""
    async with db.tenant_session(1, write=True) as session, session.begin():
        core = await session.execute(select(Order.__table__.c.tenant_id))
        assert {row.tenant_id for row in core} == {1}
        await session.execute(insert(Branch).values(tenant_id=1, name="Annexe", city="X"))
    assert len(await _ids(db, "branches", 1)) == 5
