"""Statements compiled once and run on the driver: the same rows, types, errors and limits as
SQLAlchemy's own ``execute``, and nothing run outside a transaction or a tenant's scope.

``tools.db.compiled`` runs the approval path's statements without ``Connection.execute``; each
test compares it with what SQLAlchemy itself would store and read, or aims it at something it
must refuse.
"""

from __future__ import annotations

import asyncio
import inspect
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    func,
    insert,
    literal,
    literal_column,
    select,
    text,
)
from sqlalchemy.exc import DBAPIError, IntegrityError

from tools.cards.record import CardStatus
from tools.cards.store import CardStore
from tools.db import AUDIT, PROPOSALS, Database, compiled
from tools.db.compiled import CompiledStatementError
from tools.db.tenancy import UnscopedStatementError
from tools.toolsets.merchant.models import Stock

NOW = datetime(2026, 12, 1, 7, 30, 15, 123456, tzinfo=UTC)
_STOCK = cast("Table", Stock.__table__)
_BY_CARD = (
    select(AUDIT.c.id, AUDIT.c.at, AUDIT.c.args)
    .where(AUDIT.c.card_id == bindparam("card"))
    .order_by(AUDIT.c.id)
)


def _card(card_id: str) -> dict[str, Any]:
    return {
        "id": card_id,
        "tool": "adjust_stock",
        "agent": "test",
        "user_id": 2,
        "tenant_id": 1,
        "args": {"branch": 1, "sku": "FF-PANEER-WRAP", "delta": -2, "note": None},
        "digest": "d" * 64,
        "summary": "Remove 2 units.",
        "details": [{"label": "Branch", "value": "Indiranagar (branch 1) — ₹"}],
        "warning": None,
        "status": CardStatus.PENDING.value,
        "created_at": NOW,
        "expires_at": NOW + timedelta(minutes=30),
        "issued_to": [{"userid": 2, "name": "Arjun Mehta"}],
        "approvals": [],
        "approvals_needed": 1,
        "approved_count": 0,
        "needed_role": "manager",
        "routed": True,
        "target": f"test:{card_id}",
        "standing": None,
    }


async def test_a_card_reads_back_as_sqlalchemy_stored_it(db: Database) -> None:
    """JSON, aware timestamps, booleans and NULLs round-trip through the runner exactly as
    through SQLAlchemy's own execute, in both directions."""
    cards = CardStore(db)
    async with db.begin() as conn:
        await cards.insert(conn, **_card("by-runner"))
        await conn.execute(PROPOSALS.insert(), _card("by-sqlalchemy"))
    async with db.begin() as conn:
        mine = await cards.get("by-sqlalchemy", conn=conn)
        theirs = (await conn.execute(select(PROPOSALS).where(PROPOSALS.c.id == "by-runner"))).one()
    assert mine is not None
    assert mine.args == _card("x")["args"]
    assert mine.details == (("Branch", "Indiranagar (branch 1) — ₹"),)
    assert mine.created_at == NOW
    assert mine.created_at.tzinfo is not None
    assert mine.routed is True
    assert mine.warning is None
    assert theirs.args == _card("x")["args"]
    assert theirs.expires_at == NOW + timedelta(minutes=30)
    assert theirs.issued_to == [{"userid": 2, "name": "Arjun Mehta"}]


async def test_none_in_a_json_column_is_stored_as_sqlalchemy_stores_it(db: Database) -> None:
    """An audit line without arguments stores its JSON column as SQLAlchemy's execute does
    (JSON null, not SQL NULL), so a query on it finds both lines or neither."""
    line = _line("json-null")
    async with db.begin() as conn:
        await compiled.run(conn, AUDIT.insert(), line)
        await conn.execute(AUDIT.insert(), line)
    async with db.begin() as conn:
        rows = (await compiled.run(conn, _BY_CARD, {"card": "json-null"})).all()
        null = (
            await conn.execute(
                select(AUDIT.c.id).where(AUDIT.c.card_id == "json-null", AUDIT.c.args.is_(None))
            )
        ).all()
    assert [row.args for row in rows] == [None, None]
    assert [row.at for row in rows] == [NOW, NOW]
    assert len(null) in (0, 2)


async def test_a_driver_error_is_sqlalchemys_error(db: Database) -> None:
    """A second card with the same id fails as IntegrityError, the error the proposal path
    turns into a plain refusal."""
    cards = CardStore(db)
    async with db.begin() as conn:
        await cards.insert(conn, **_card("twice"))
    with pytest.raises(IntegrityError):
        async with db.begin() as conn:
            await cards.insert(conn, **_card("twice"))


async def test_an_update_reports_the_rows_it_matched(db: Database) -> None:
    """A conditional move reports one row the first time and none the second: the claim's
    exactly-once rests on it."""
    cards = CardStore(db)
    async with db.begin() as conn:
        await cards.insert(conn, **_card("once"))
    moves = []
    for _ in range(2):
        async with db.begin() as conn:
            moves.append(
                await cards.move("once", frm=CardStatus.PENDING, to=CardStatus.WITHDRAWN, conn=conn)
            )
    assert moves == [True, False]


async def test_a_tenant_tables_statement_is_refused(db: Database) -> None:
    """A statement on a merchant's table cannot run as an engine-table statement: it would
    reach every merchant's rows."""
    async with db.begin() as conn:
        with pytest.raises(UnscopedStatementError):
            await compiled.run(conn, select(_STOCK.c.id, _STOCK.c.quantity))


async def test_nothing_runs_outside_a_transaction(db: Database) -> None:
    """On a connection with no transaction begun the runner refuses: on the driver the
    statement would autocommit."""
    async with db.engine.connect() as conn:
        with pytest.raises(CompiledStatementError):
            await compiled.run(conn, _BY_CARD, {"card": "x"})


_TOY = Table(
    "compiled_toy",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("stamp", String, default=lambda: "made in Python"),
    Column("name", String),
)


@pytest.mark.parametrize(
    "statement",
    [insert(_TOY), select(_TOY.c.id).where(_TOY.c.id.in_([1, 2]))],
    ids=["python-default", "expanding-in"],
)
async def test_what_it_cannot_run_as_sqlalchemy_would_is_refused(
    db: Database, statement: Any
) -> None:
    """A Python-side default it would not compute, or an expanding IN, is refused before
    anything reaches the database."""
    async with db.begin() as conn:
        with pytest.raises(CompiledStatementError):
            await compiled.run(conn, statement, {"name": "x"})


def test_other_drivers_are_refused_when_the_database_is_opened() -> None:
    """A driver the runner does not know is refused at startup, not at the first approval."""
    with pytest.raises(ValueError, match="postgresql\\+asyncpg"):
        Database("postgresql+psycopg://nobody@localhost/none")


def test_no_public_door_skips_the_tenant_check() -> None:
    """Every statement runner the module exports refuses a tenant table's statement: the one
    without the check belongs to the pre-scoped door alone."""
    doors = [
        name for name in compiled.__all__ if inspect.iscoroutinefunction(getattr(compiled, name))
    ]
    assert doors == ["run"]


@pytest.mark.parametrize(
    ("statement", "refusal"),
    [
        (
            select(literal_column("tenant_id")).select_from(text("stock")).distinct(),
            UnscopedStatementError,
        ),
        (text("SELECT DISTINCT tenant_id FROM stock"), CompiledStatementError),
        (select(_STOCK.c.id, literal_column("id")), CompiledStatementError),
    ],
    ids=["text-fragment", "bare-text", "two-columns-one-name"],
)
async def test_a_statement_whose_tables_or_columns_it_cannot_know_is_refused(
    db: Database, statement: Any, refusal: type[Exception]
) -> None:
    """A text() fragment could name any merchant's table, a bare text() would return no rows
    instead of its rows, and two result columns of one name cannot be a row: each refused
    before it runs."""
    async with db.begin() as conn:
        with pytest.raises(refusal):
            await compiled.run(conn, statement)


def _counting(upto: int) -> Any:
    """A statement that keeps the database busy for about a second."""
    n = select(literal(1).label("n")).cte("n", recursive=True)
    n = n.union_all(select(n.c.n + 1).where(n.c.n < upto))
    return select(func.count()).select_from(n)


def _line(card: str) -> dict[str, Any]:
    return {
        "at": NOW,
        "agent": "test",
        "tool": "t",
        "user_id": None,
        "tenant_id": 1,
        "scope": "write",
        "outcome": "ok",
        "detail": "",
        "rows": 0,
        "took_ms": 1.5,
        "args": None,
        "card_id": card,
    }


async def _cancelled(db: Database, statement: Any, *, after: float) -> Any:
    """Runs ``statement`` in a transaction, cancels it ``after`` seconds in and lets the cancel
    end the transaction; the driver connection it ran on."""
    try:
        async with db.begin() as conn:
            ran_on = (await conn.get_raw_connection()).driver_connection
            task = asyncio.create_task(compiled.run(conn, statement))
            await asyncio.sleep(after)
            task.cancel()
            await task
    except asyncio.CancelledError:
        return ran_on
    raise AssertionError("the statement finished before it was cancelled")


@pytest.mark.parametrize("after", [0.0, 0.2], ids=["at-its-first-await", "mid-statement"])
async def test_a_cancelled_statement_costs_no_later_commit(
    db: Database, database_url: str, after: float
) -> None:
    """A statement cancelled as it starts (asyncpg's BEGIN in flight) or mid-way throws its
    connection away, as execute does: the next transaction from the pool runs elsewhere and
    its commit is durable."""
    async with db.begin() as conn:  # a warm pool: the cancelled transaction takes this one
        await compiled.run(conn, _BY_CARD, {"card": "warm"})
    cancelled = await _cancelled(db, _counting(4_000_000), after=after)
    async with db.begin() as conn:
        later = (await conn.get_raw_connection()).driver_connection
        await compiled.run(conn, AUDIT.insert(), _line("after-cancel"))
    other = Database(database_url)
    try:
        async with other.begin() as conn:
            found = await compiled.run(conn, _BY_CARD, {"card": "after-cancel"})
    finally:
        await other.dispose()
    assert len(found.all()) == 1
    assert later is not cancelled


async def test_a_dropped_connection_is_sqlalchemys_error_and_invalidated(db: Database) -> None:
    """A statement on a connection the driver closed fails as SQLAlchemy's disconnect error,
    and the connection is invalidated so the pool never hands it out again."""
    async with db.begin() as conn:
        dropped = (await conn.get_raw_connection()).driver_connection
        await dropped.close()
        with pytest.raises(DBAPIError) as caught:
            await compiled.run(conn, _BY_CARD, {"card": "x"})
        invalidated = conn.invalidated
        await conn.rollback()
    async with db.begin() as conn:
        assert (await conn.get_raw_connection()).driver_connection is not dropped
        assert (await compiled.run(conn, _BY_CARD, {"card": "x"})).all() == []
    assert caught.value.connection_invalidated
    assert invalidated
