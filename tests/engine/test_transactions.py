"""How a cycle meets the database: one transaction to propose, two to approve, in that order."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import text

from tests.engine.conftest import ARJUN, EVERYTHING
from tests.support.driver_calls import Step, driver_calls
from tools import Registry
from tools.db import Database

RENAME = {"branch_id": 1, "name": "Indiranagar East"}


@asynccontextmanager
async def _transactions(db: Database) -> AsyncIterator[list[list[str]]]:
    """Every statement the driver received, grouped by the transaction that ended it.

    Recorded at the driver (``tests.support.driver_calls``): the approval path runs its
    statements there, not through SQLAlchemy's ``execute`` and its events. A new connection's
    setup (SQLite's PRAGMAs) and the pool's rollback of a connection handed back after its
    commit belong to no transaction and are left out.
    """
    async with db.engine.connect():
        pass  # the engine's first connection asks the server about itself; not a cycle's
    steps: list[Step] = []
    done: list[list[str]] = []
    with driver_calls(steps):
        yield done
    current: list[str] = []
    for step in steps:
        if step.kind == "sql" and not step.sql.startswith(("BEGIN", "PRAGMA")):
            current.append(" ".join(step.sql.split()[:3]))
        elif step.kind in ("commit", "rollback") and (current or step.kind == "commit"):
            done.append([*current, step.kind.upper()])
            current.clear()


async def test_propose_is_one_transaction_with_its_audit_line(
    db: Database, registry: Registry
) -> None:
    """The card and its 'proposed' audit line are stored by one commit, after the tool's reads."""
    async with _transactions(db) as done:
        await registry.call(EVERYTHING, "rename_branch", RENAME, ARJUN)

    [proposed] = done
    assert proposed[-3:] == ["INSERT INTO proposals", "INSERT INTO audit_log", "COMMIT"]


async def test_approve_commits_the_claim_and_its_audit_before_the_write(
    db: Database,
    registry: Registry,
) -> None:
    """Two transactions: the claim with 'approved / executing', committed; then the write, the
    card's move to done and the outcome's audit line, committed together."""
    proposal = (await registry.call(EVERYTHING, "rename_branch", RENAME, ARJUN)).proposal
    assert proposal is not None

    async with _transactions(db) as done:
        assert (await registry.approve(EVERYTHING, proposal.card, ARJUN)).ok

    claim, write = done
    assert claim == [
        "SELECT proposals.id, proposals.tool,",
        "UPDATE proposals SET",
        "INSERT INTO audit_log",
        "COMMIT",
    ]
    assert "UPDATE branches SET" in write
    assert write.index("UPDATE branches SET") < write.index("UPDATE proposals SET")
    assert write[-2:] == ["INSERT INTO audit_log", "COMMIT"]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_a_write_cancelled_while_waiting_for_the_lock_leaves_no_lock_behind(
    db: Database, database_url: str
) -> None:
    """A write transaction cancelled while SQLite's lock was held elsewhere: once that lock is
    released, other writers (another process) and this process's next write both get through."""
    path = database_url.split("///", 1)[1]
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock for a moment

    async def write() -> None:
        async with db.begin(write=True) as conn:
            await conn.execute(text("UPDATE branches SET name = 'Cancelled' WHERE id = 1"))

    waiting = asyncio.create_task(write())
    await asyncio.sleep(0.3)  # BEGIN IMMEDIATE is now queued on SQLite's busy timeout
    # The other process lets go a moment after the cancel, on its own schedule.
    releasing = threading.Timer(0.7, holder.execute, ("COMMIT",))
    releasing.start()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    releasing.join()
    holder.close()
    await asyncio.sleep(0.5)  # the cancelled BEGIN's thread gets its answer meanwhile

    other = sqlite3.connect(path, isolation_level=None, timeout=2)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("COMMIT")
    finally:
        other.close()
    async with db.begin(write=True) as conn:
        await conn.execute(text("UPDATE branches SET name = 'Written' WHERE id = 1"))
    async with db.engine.connect() as conn:
        name = (await conn.execute(text("SELECT name FROM branches WHERE id = 1"))).scalar_one()
    assert name == "Written"
