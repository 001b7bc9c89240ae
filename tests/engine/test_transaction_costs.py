"""What opening and ending a transaction costs around its SQL: greenlets and tasks, on both databases."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import greenlet
import pytest
from sqlalchemy import select, text

from tools.cards.store import _BY_ID
from tools.db import PROPOSALS, Database, compiled


@contextmanager
def _greenlets() -> Iterator[list[Any]]:
    """Every greenlet switched into while the block runs, other than the one it started in."""
    started = greenlet.getcurrent()
    seen: list[Any] = []

    def trace(event: str, args: Any) -> None:
        if event in ("switch", "throw"):
            target = args[1]
            if target is not started and all(target is not g for g in seen):
                seen.append(target)

    previous = greenlet.settrace(trace)
    try:
        yield seen
    finally:
        greenlet.settrace(previous)


async def _tasks_made(work: Callable[[], Awaitable[None]]) -> int:
    """How many asyncio tasks ``work`` created."""
    loop = asyncio.get_running_loop()
    made = [0]
    default = loop.get_task_factory()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        made[0] += 1
        if default is not None:
            return default(loop, coro, **kwargs)  # type: ignore[return-value]
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(factory)
    try:
        await work()
    finally:
        loop.set_task_factory(default)
    return made[0]


async def _one_read(db: Database) -> None:
    async with db.begin(write=True) as conn:
        await compiled.run(conn, _BY_ID, {"card": "none"})


async def test_a_transaction_opens_and_ends_in_one_greenlet_each(db: Database) -> None:
    """Connecting and beginning share one greenlet, committing and handing back another: each
    greenlet cost about as much as a statement, and every approval opens such a transaction."""
    await _one_read(db)  # the pool's first connection is not a transaction's cost
    with _greenlets() as seen:
        await _one_read(db)
    assert len(seen) == 2


async def test_a_committed_transaction_gives_its_connection_back_without_a_task(
    db: Database,
) -> None:
    """Handing back a connection after its commit runs in the transaction's own task: a task of
    its own cost a turn of the event loop in every transaction."""
    await _one_read(db)
    assert await _tasks_made(lambda: _one_read(db)) == 0
    assert db.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_a_committed_session_closes_without_a_task(db: Database) -> None:
    """A session whose transaction committed has nothing to give back: leaving it starts no
    task, and it still forgets what it loaded."""

    async def propose_like() -> None:
        async with db.tenant_session(1, write=True) as session:
            await session.execute(select(PROPOSALS.c.id).limit(1))
            await session.commit()
            assert session.sync_session.in_transaction() is False

    await propose_like()
    assert await _tasks_made(propose_like) == 0
    assert db.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_a_transaction_that_raises_keeps_nothing_and_gives_its_connection_back(
    db: Database,
) -> None:
    """A statement then an error in the block: the statement is rolled back, the error comes out
    as it was raised, and the connection is back in the pool."""

    async def fails() -> None:
        async with db.begin(write=True) as conn:
            await conn.execute(text("UPDATE branches SET name = 'Lost' WHERE id = 1"))
            raise LookupError("after the update")

    with pytest.raises(LookupError, match="after the update"):
        await fails()
    assert db.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    async with db.begin() as conn:
        name = (await conn.execute(text("SELECT name FROM branches WHERE id = 1"))).scalar_one()
    assert name != "Lost"


async def test_a_transaction_cancelled_inside_keeps_nothing_and_gives_its_connection_back(
    db: Database,
) -> None:
    """Cancelled while its block waits: nothing it wrote is kept, the cancel reaches the caller,
    and the connection is back in the pool."""
    entered = asyncio.Event()

    async def waits() -> None:
        async with db.begin(write=True) as conn:
            await conn.execute(text("UPDATE branches SET name = 'Cancelled' WHERE id = 1"))
            entered.set()
            await asyncio.sleep(30)

    task = asyncio.create_task(waits())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert db.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    async with db.begin() as conn:
        name = (await conn.execute(text("SELECT name FROM branches WHERE id = 1"))).scalar_one()
    assert name != "Cancelled"


async def test_a_session_left_uncommitted_rolls_back(db: Database) -> None:
    """A session left with its transaction open writes nothing and gives its connection back."""
    async with db.session(write=True) as session:
        await session.execute(text("UPDATE branches SET name = 'Uncommitted' WHERE id = 1"))
    assert db.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    async with db.begin() as conn:
        name = (await conn.execute(text("SELECT name FROM branches WHERE id = 1"))).scalar_one()
    assert name != "Uncommitted"
