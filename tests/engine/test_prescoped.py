"""Statements scoped once, at import: each still sees and changes only the session's merchant.

The approval path runs its statements as Core, scoped when they are built instead of at every
execution (``tools.db.prescoped``). Each test aims one at the other merchant's rows, or tries to
run something the builder never scoped; it is limited to the session's tenant or refused. Every
test runs through both doors: ``execute`` (SQLAlchemy's) and ``run`` (compiled once, on the
driver).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest
from sqlalchemy import Table, bindparam, insert, select, text, update

from tools.db import Database, prescoped
from tools.db.prescoped import TENANT_PARAM, tenant_statement
from tools.db.tenancy import CrossTenantWriteError, TenantScopeError, UnscopedStatementError
from tools.toolsets.merchant.models import Branch, Product, Stock, Tenant

FIESTA, HARBOR = 1, 2
_B, _P, _S = (cast("Table", m.__table__) for m in (Branch, Product, Stock))

_BRANCH = tenant_statement(select(_B.c.id, _B.c.tenant_id).where(_B.c.id == bindparam("id")))
_ALL_STOCK = tenant_statement(
    select(_S.c.tenant_id, _P.c.tenant_id).join(_P, _P.c.id == _S.c.product_id)
)
_PRICE = tenant_statement(update(_P).where(_P.c.id == bindparam("product")))
_NEW_BRANCH = tenant_statement(insert(_B))


Door = Callable[..., Awaitable[Any]]


@pytest.fixture(params=["execute", "run"])
def execute(request: pytest.FixtureRequest) -> Door:
    door: Door = getattr(prescoped, request.param)
    return door


async def _ids(db: Database, table: Any, tenant: int) -> list[int]:
    async with db.session() as session:
        rows = await session.execute(select(table.c.id).where(table.c.tenant_id == tenant))
        return [row.id for row in rows]


async def _prices(db: Database, tenant: int) -> list[int]:
    async with db.session() as session:
        rows = await session.execute(select(_P.c.price).where(_P.c.tenant_id == tenant))
        return [row.price for row in rows]


async def test_a_read_by_the_other_merchants_id_finds_nothing(db: Database, execute: Door) -> None:
    """A pre-scoped SELECT by id, given Harbor Books' branch id in a Fiesta session, finds nothing."""
    theirs = await _ids(db, _B, HARBOR)
    mine = await _ids(db, _B, FIESTA)
    async with db.tenant_session(FIESTA) as session:
        found = [(await execute(session, _BRANCH, {"id": i})).all() for i in theirs + mine]
    assert [row.tenant_id for rows in found for row in rows] == [FIESTA] * len(mine)


async def test_a_join_is_scoped_on_every_table(db: Database, execute: Door) -> None:
    """Both sides of a pre-scoped join are limited to the session's merchant."""
    async with db.tenant_session(HARBOR) as session:
        rows = (await execute(session, _ALL_STOCK)).all()
    assert rows
    assert {tenant for row in rows for tenant in row} == {HARBOR}


async def test_an_update_aimed_at_the_other_merchant_changes_nothing(
    db: Database, execute: Door
) -> None:
    """A pre-scoped UPDATE by Harbor Books' product id, in a Fiesta session, matches no row."""
    before = await _prices(db, HARBOR)
    async with db.tenant_session(FIESTA, write=True) as session:
        for product in await _ids(db, _P, HARBOR):
            result = await execute(session, _PRICE, {"product": product, "price": 1})
            assert result.rowcount == 0
        await session.commit()
    assert await _prices(db, HARBOR) == before


async def test_an_insert_takes_the_sessions_merchant(db: Database, execute: Door) -> None:
    """A pre-scoped INSERT stores the row for the session's merchant; naming one is refused."""
    row = {"name": "Annexe", "city": "Pune", "status": "open"}
    async with db.tenant_session(FIESTA, write=True) as session:
        await execute(session, _NEW_BRANCH, row)
        with pytest.raises(CrossTenantWriteError):
            await execute(session, _NEW_BRANCH, {**row, "name": "Other", "tenant_id": HARBOR})
        with pytest.raises(CrossTenantWriteError):
            await execute(session, _NEW_BRANCH, {**row, "name": "Other", TENANT_PARAM: HARBOR})
        await session.commit()
    async with db.session() as session:
        stored = (await session.execute(select(_B.c.tenant_id).where(_B.c.name == "Annexe"))).all()
    assert [r.tenant_id for r in stored] == [FIESTA]


async def test_only_statements_scoped_when_built_run(db: Database, execute: Door) -> None:
    """A statement not made by tenant_statement, or a session with no tenant, is refused."""
    plain = select(_B.c.id).where(_B.c.id == bindparam("id"))
    async with db.tenant_session(FIESTA) as session:
        with pytest.raises(UnscopedStatementError):
            await execute(session, plain, {"id": 1})
    async with db.session() as session:
        with pytest.raises(TenantScopeError):
            await execute(session, _BRANCH, {"id": 1})


@pytest.mark.parametrize(
    "statement",
    [
        select(_B.c.id).where(text("id = 1")),
        insert(_B).from_select(["name"], select(_B.c.name)),
        insert(_B).values(tenant_id=HARBOR),
        update(_B).values(tenant_id=HARBOR),
        select(Tenant.id),
        insert(Tenant),
    ],
    ids=[
        "text",
        "insert-select",
        "insert-names-tenant",
        "update-moves-tenant",
        "no-tenant-table",
        "insert-no-tenant-table",
    ],
)
def test_what_cannot_be_scoped_is_refused_when_built(statement: Any) -> None:
    """text(), INSERT … SELECT, statements that set tenant_id or touch no tenant table are
    refused when built."""
    with pytest.raises(TenantScopeError):
        tenant_statement(statement)
