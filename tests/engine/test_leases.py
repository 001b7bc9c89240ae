"""Leases: a card is settled only once the process executing it is gone, never while it runs."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.engine.conftest import ARJUN, EVERYTHING, SteppedClock
from tests.engine.test_reconcile import ROOT, _wait_for
from tools import CardStatus, ProcessLease, Registry
from tools.audit.log import AuditLog, Outcome
from tools.cards.lease import pid_space
from tools.cards.store import CardStore
from tools.db import LEASES, Database
from tools.toolsets.merchant.models import Branch

RENAME = {"branch_id": 1, "name": "X"}


async def _claimed_by(registry: Registry, db: Database, holder: str) -> str:
    proposal = (await registry.call(EVERYTHING, "rename_branch", RENAME, ARJUN)).proposal
    assert proposal is not None
    assert await CardStore(db).claim(proposal.card_id, ARJUN, registry.now(), holder=holder)
    return proposal.card_id


async def _lease_row(
    registry: Registry, db: Database, holder: str, *, beat_ago: timedelta, stopped: bool = False
) -> None:
    """A lease of a process on another machine (its pid cannot be checked from here)."""
    beat = registry.now() - beat_ago
    async with db.begin() as conn:
        await conn.execute(
            LEASES.insert().values(
                holder=holder,
                pid_space="another-machine",
                pid=1,
                started_at=beat,
                beat_at=beat,
                stopped_at=beat if stopped else None,
            )
        )


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
async def test_press_in_flight_on_a_live_process_survives_a_new_process(
    lease: ProcessLease, db: Database, registry: Registry, database_url: str, tmp_path: Path
) -> None:
    """Rolling deploy: the old process is mid-write when a new one starts and reconciles; the
    card is left alone, and the old process's write then completes and is recorded as done."""
    proposal = (
        await registry.call(EVERYTHING, "wait_for_signal", {"branch_id": 1, "name": "go"}, ARJUN)
    ).proposal
    assert proposal is not None
    old = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/engine/crash_child.py"),
        database_url,
        proposal.card,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        await _wait_for(tmp_path / "go", old)
        await lease.start()  # the new process

        assert await registry.sweeps.reconcile() == []
        assert (await registry.card(proposal.card_id)).status is CardStatus.EXECUTING  # type: ignore[union-attr]

        old.send_signal(signal.SIGUSR1)
        assert await asyncio.wait_for(old.wait(), timeout=60) == 0
    finally:
        if old.returncode is None:
            old.kill()
            await old.wait()

    record = await registry.card(proposal.card_id)
    assert record is not None and record.status is CardStatus.DONE
    async with db.session() as session:
        branch = await session.get(Branch, 1)
        assert branch is not None and branch.name == "go"
    trail = [(r.outcome, r.detail) for r in await AuditLog(db).recent(card_id=proposal.card_id)]
    assert trail[:2] == [(Outcome.DONE, "done"), (Outcome.APPROVED, "executing")]
    assert Outcome.INTERRUPTED not in {outcome for outcome, _ in trail}
    assert await registry.sweeps.reconcile() == []


async def test_process_silent_past_the_grace_period_is_gone(
    lease: ProcessLease, db: Database, registry: Registry, clock: SteppedClock
) -> None:
    """A claim of a process whose heartbeat is fresh stays; once the heartbeat is older than the
    grace period the process counts as gone and its card is settled, and audited."""
    await _lease_row(registry, db, "elsewhere", beat_ago=timedelta(seconds=5))
    card_id = await _claimed_by(registry, db, "elsewhere")

    assert await registry.sweeps.reconcile() == []
    clock.step(lease.expiry)
    settled = await registry.sweeps.reconcile()

    assert [(c.card_id, c.status) for c in settled] == [(card_id, CardStatus.INTERRUPTED)]
    assert (await AuditLog(db).recent(card_id=card_id))[0].outcome == Outcome.INTERRUPTED


async def test_stopped_process_is_settled_at_once(db: Database, registry: Registry) -> None:
    """A process that stopped (after draining its work) left nothing in flight: settled now."""
    await _lease_row(registry, db, "stopped", beat_ago=timedelta(0), stopped=True)
    card_id = await _claimed_by(registry, db, "stopped")

    assert [c.card_id for c in await registry.sweeps.reconcile()] == [card_id]


async def test_own_card_is_settled_only_when_its_press_is_no_longer_running(
    db: Database,
    lease: ProcessLease,
    registry: Registry,
) -> None:
    """This process's own claim is left alone while its press runs here; once the press ended
    without recording an outcome (the database dropped), the sweep settles it."""
    await lease.start()
    card_id = await _claimed_by(registry, db, lease.holder)

    with lease.executing(card_id):
        assert await registry.sweeps.reconcile() == []
    assert [c.card_id for c in await registry.sweeps.reconcile()] == [card_id]


async def test_lease_row_follows_start_beat_and_stop(
    lease: ProcessLease, db: Database, registry: Registry, clock: SteppedClock
) -> None:
    """start writes the row with this process's pid, beat moves the heartbeat (writing the row
    again if it was forgotten), stop marks the process gone."""
    await lease.start()
    clock.step(timedelta(seconds=3))
    await lease.beat()
    async with db.engine.connect() as conn:
        row = (await conn.execute(select(LEASES))).one()
    assert (row.holder, row.pid, row.pid_space) == (lease.holder, os.getpid(), pid_space())
    assert row.beat_at - row.started_at == timedelta(seconds=3) and row.stopped_at is None

    async with db.begin() as conn:
        await conn.execute(LEASES.delete())
    await lease.beat()
    await lease.stop()
    async with db.engine.connect() as conn:
        row = (await conn.execute(select(LEASES))).one()
    assert row.holder == lease.holder and row.stopped_at == registry.now()
