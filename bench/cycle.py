"""The approval cycle (propose + approve + execute + audit) per second, vs the same SQL by hand.

The product side is ``Registry.call`` (adjust_stock +1 at branch 1 for FF-PANEER-WRAP, as Arjun)
followed by ``Registry.approve`` with the card it returned: resolve, seal, store the card, audit
the proposal, verify the token, load and re-validate the arguments, claim, audit "approved /
executing", execute with its live re-check, move the card to done, audit the outcome.

The baseline is that cycle's SQL without the product around it. One real cycle is recorded
first at the drivers' own public methods (``tests.support.driver_calls``: aiosqlite's connection
and cursor, asyncpg's connection, prepared statements and transactions), so it sees every
statement, begin, commit and rollback the driver receives, whether SQLAlchemy's ``execute`` sent
it or the approval path's compiled-once runner (``tools.db.compiled``) did, and the pool's own
rollback of a connection handed back. Each baseline cycle then sends exactly that sequence
straight through the raw driver on one connection, in the same transactions, with a fresh card
id in every statement that carried the recorded one. It does no Python work of its own: no ORM,
no schema validation, no signing, no decisions. The ratio is therefore the whole cost of the
product's Python around its SQL.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
from tqdm import tqdm

from bench.stage import CARD_SECRET, postgres_cluster, postgres_database, sqlite_database
from bench.stats import Figure, Spread
from tests.support.driver_calls import Step, driver_calls
from tools import Caller, CardSigner, Registry, Role
from tools.db import Database
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry

__all__ = ["Recording", "Step", "record_cycle", "run"]

RUNS = 5
CYCLES = 100
ARJUN = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
ADJUST = {"branch": 1, "sku": "FF-PANEER-WRAP", "delta": 1, "reason": "delivery counted"}


@dataclass(frozen=True, slots=True)
class Recording:
    steps: list[Step]
    card_id: str

    @property
    def statements(self) -> int:
        return sum(step.kind == "sql" for step in self.steps)

    @property
    def transactions(self) -> int:
        """Begun ones: asyncpg's start, or SQLite's BEGIN statement."""
        return sum(
            step.kind == "begin" or (step.kind == "sql" and step.sql.startswith("BEGIN"))
            for step in self.steps
        )

    @property
    def resets(self) -> int:
        """Rollbacks of no transaction: the pool's reset of a connection handed back."""
        open_, resets = False, 0
        for step in self.steps:
            if step.kind == "begin" or (step.kind == "sql" and step.sql.startswith("BEGIN")):
                open_ = True
            elif step.kind in ("commit", "rollback"):
                resets += step.kind == "rollback" and not open_
                open_ = False
        return resets

    @property
    def shape(self) -> str:
        shape = f"{self.statements} statements in {self.transactions} transactions"
        if self.resets:
            shape += f", {self.resets} pool rollbacks on return"
        return shape


async def cycle(registry: Registry) -> str:
    """One whole cycle through the product; returns the card id."""
    result = await registry.call(DEFAULT_AGENT, "adjust_stock", ADJUST, ARJUN)
    proposal = result.proposal
    assert proposal is not None
    assert proposal.card is not None
    decision = await registry.approve(DEFAULT_AGENT, proposal.card, ARJUN)
    if not decision.ok:
        raise RuntimeError(f"the benchmark's card did not run: {decision.card.outcome}")
    return proposal.card_id


async def record_cycle(db: Database, registry: Registry) -> Recording:
    """Runs one cycle with the driver's adapter recording; returns what reached the driver."""
    steps: list[Step] = []
    with driver_calls(steps):
        card_id = await cycle(registry)
    return Recording(steps, card_id)


def _fresh(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list | tuple):
        return type(value)(_fresh(item, old, new) for item in value)
    if isinstance(value, dict):
        return {key: _fresh(item, old, new) for key, item in value.items()}
    return value


class SqliteReplay:
    """The recorded cycle on one aiosqlite connection set up as the product sets up its own."""

    def __init__(self, conn: aiosqlite.Connection, recording: Recording) -> None:
        self.conn, self.recording = conn, recording

    @classmethod
    async def open(cls, path: str, recording: Recording) -> SqliteReplay:
        conn = await aiosqlite.connect(path, timeout=30, isolation_level=None)
        for pragma in (
            "journal_mode=WAL",
            "synchronous=NORMAL",
            "foreign_keys=ON",
            "busy_timeout=30000",
        ):
            await conn.execute(f"PRAGMA {pragma}")
        return cls(conn, recording)

    async def cycle(self) -> None:
        old, new = self.recording.card_id, uuid.uuid4().hex
        for step in self.recording.steps:
            if step.kind == "sql":
                params = _fresh(step.params, old, new)
                if step.many:
                    await self.conn.executemany(step.sql, params)
                else:
                    async with self.conn.execute(step.sql, params) as cursor:
                        await cursor.fetchall()
            elif step.kind == "commit":
                await self.conn.commit()
            elif step.kind == "rollback":
                await self.conn.rollback()
            # "begin": SQLite's BEGIN (IMMEDIATE) is itself one of the recorded statements.

    async def close(self) -> None:
        await self.conn.close()


class PostgresReplay:
    """The recorded cycle on one asyncpg connection with SQLAlchemy's JSON codecs."""

    def __init__(self, conn: asyncpg.Connection, recording: Recording) -> None:
        self.conn, self.recording = conn, recording

    @classmethod
    async def open(cls, url: str, recording: Recording) -> PostgresReplay:
        conn = await asyncpg.connect(url.replace("+asyncpg", ""))
        await conn.set_type_codec(
            "json", encoder=str.encode, decoder=bytes.decode, schema="pg_catalog", format="binary"
        )
        await conn.set_type_codec(
            "jsonb",
            encoder=lambda s: b"\x01" + s.encode(),
            decoder=lambda b: b[1:].decode(),
            schema="pg_catalog",
            format="binary",
        )
        return cls(conn, recording)

    async def cycle(self) -> None:
        old, new = self.recording.card_id, uuid.uuid4().hex
        transaction: Any = None
        for step in self.recording.steps:
            if step.kind == "begin":
                transaction = self.conn.transaction()
                await transaction.start()
            elif step.kind == "sql":
                params = _fresh(step.params, old, new)
                if step.many:
                    await self.conn.executemany(step.sql, params)
                else:
                    await self.conn.fetch(step.sql, *params)
            elif transaction is not None:
                await (transaction.commit() if step.kind == "commit" else transaction.rollback())
                transaction = None

    async def close(self) -> None:
        await self.conn.close()


async def _rate(cycles: int, one: Callable[[], Awaitable[Any]], cpu: list[float]) -> float:
    """Cycles per second; appends to ``cpu`` the main thread's CPU time per cycle, in ms.

    CPU time leaves out the database's own work (another process, or aiosqlite's thread) and
    the time other processes took the CPU: on a shared machine it moves far less than the rate.
    """
    started, cpu_started = time.perf_counter(), time.thread_time()
    for _ in range(cycles):
        await one()
    cpu.append((time.thread_time() - cpu_started) * 1000 / cycles)
    return cycles / (time.perf_counter() - started)


def _cpu_note(ours: list[float], raw: list[float]) -> str:
    ratios = Spread.of([o / r for o, r in zip(ours, raw, strict=True)])
    return (
        f"main-thread CPU per cycle {Spread.of(ours).show(2)} ms against "
        f"{Spread.of(raw).show(2)} ms by hand, {ratios.show(2)}×"
    )


async def _measure(
    label: str, url: str, figure: Figure, *, runs: int, cycles: int
) -> tuple[str, str]:
    """Runs the pairs of runs into ``figure``; the recorded cycle's shape and the CPU note."""
    cpu_ours: list[float] = []
    cpu_raw: list[float] = []
    db = Database(url)
    registry = build_registry(db, CardSigner([CARD_SECRET]))
    try:
        for _ in range(3):  # warm: connections, statement caches, lazy imports
            await cycle(registry)
        recording = await record_cycle(db, registry)
        if db.is_sqlite:
            replay: SqliteReplay | PostgresReplay = await SqliteReplay.open(
                url.split("///", 1)[1], recording
            )
        else:
            replay = await PostgresReplay.open(url, recording)
        try:
            await replay.cycle()
            for _ in tqdm(range(runs), desc=f"cycle {label}", unit="run", leave=False):
                ours = await _rate(cycles, lambda: cycle(registry), cpu_ours)
                raw = await _rate(cycles, replay.cycle, cpu_raw)
                figure.add(ours, raw)
        finally:
            await replay.close()
    finally:
        await db.dispose()
    return recording.shape, _cpu_note(cpu_ours, cpu_raw)


async def run(workdir: Path, *, runs: int = RUNS, cycles: int = CYCLES) -> list[Figure]:
    sqlite = Figure("approval cycle, SQLite", "cycles/s", "higher", target_ratio=1.5)
    postgres = Figure("approval cycle, PostgreSQL", "cycles/s", "higher", target_ratio=1.5)
    shape, cpu = await _measure(
        "sqlite", await sqlite_database(workdir, "cycle.db"), sqlite, runs=runs, cycles=cycles
    )
    sqlite.note = f"same SQL by hand through aiosqlite ({shape}); {cpu}"
    with postgres_cluster() as cluster:
        url = await postgres_database(cluster, "cs_bench_cycle")
        shape, cpu = await _measure("postgresql", url, postgres, runs=runs, cycles=cycles)
    postgres.note = (
        f"same SQL by hand through asyncpg ({shape}); {cpu}; the cluster runs with fsync and "
        "synchronous_commit off"
    )
    return [sqlite, postgres]
