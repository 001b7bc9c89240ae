"""The reconciler settles cards whose process is gone, and never one a live process is executing."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from datetime import timedelta
from pathlib import Path

from tests.engine.conftest import ARJUN, EVERYTHING, SteppedClock
from tests.engine.toy import TOY_TOOLS
from tools import CardStatus, ProcessLease, Registry
from tools.audit.log import AuditLog, Outcome
from tools.cards.store import CardStore
from tools.db import Database
from tools.keeping.reconcile import INTERRUPTED_NOTE, UNKNOWN_NOTE
from tools.toolsets.merchant.models import Branch

ROOT = Path(__file__).resolve().parents[2]


async def _wait_for(path: Path, process: asyncio.subprocess.Process, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.returncode is None, "the approving process ended before its write began"
        assert time.monotonic() < deadline, "the approving process never reached its write"
        await asyncio.sleep(0.05)


async def test_card_killed_mid_write_becomes_interrupted(
    db: Database, registry: Registry, database_url: str, tmp_path: Path
) -> None:
    """SIGKILL between 'approved / executing' and the commit: the process is dead on this
    machine, so the reconciler marks the card interrupted at once, audits it, reports it, and
    the half-made write is not in the database."""
    proposal = (
        await registry.call(EVERYTHING, "wait_forever", {"branch_id": 1, "name": "marker"}, ARJUN)
    ).proposal
    assert proposal is not None
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(ROOT / "tests/engine/crash_child.py"),
        database_url,
        proposal.card,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        await _wait_for(tmp_path / "marker", child)
        trail = await AuditLog(db).recent(card_id=proposal.card_id)
        assert (trail[0].outcome, trail[0].detail) == (Outcome.APPROVED, "executing")
    finally:
        child.send_signal(signal.SIGKILL)
        assert await child.wait() == -signal.SIGKILL

    settled = await registry.sweeps.reconcile()

    assert [(c.card_id, c.status, c.outcome) for c in settled] == [
        (proposal.card_id, CardStatus.INTERRUPTED, INTERRUPTED_NOTE)
    ]
    async with db.session() as session:
        branch = await session.get(Branch, 1)
        assert branch is not None and branch.name == "Indiranagar"
    assert (await AuditLog(db).recent(card_id=proposal.card_id))[0].outcome == Outcome.INTERRUPTED
    assert await registry.sweeps.reconcile() == []


async def test_external_side_effects_are_reported_as_unknown(
    lease: ProcessLease, db: Database, registry: Registry, clock: SteppedClock
) -> None:
    """A tool declaring effects outside the database is settled as 'outcome unknown'."""
    from dataclasses import replace

    tool = next(t for t in TOY_TOOLS if t.name == "rename_branch")
    registry._catalogue._reference["rename_branch"] = replace(tool, external=True)
    proposal = (
        await registry.call(EVERYTHING, "rename_branch", {"branch_id": 1, "name": "X"}, ARJUN)
    ).proposal
    assert proposal is not None
    assert await CardStore(db).claim(proposal.card_id, ARJUN, registry.now())
    clock.step(lease.expiry)

    settled = await registry.sweeps.reconcile()

    assert [(c.status, c.outcome) for c in settled] == [(CardStatus.UNKNOWN, UNKNOWN_NOTE)]


async def test_unknown_claimant_is_given_the_grace_period(
    lease: ProcessLease, db: Database, registry: Registry, clock: SteppedClock
) -> None:
    """A card claimed by no known process (before leases existed) is left alone until it has
    been stuck longer than the grace period; then it is settled."""
    proposal = (
        await registry.call(EVERYTHING, "rename_branch", {"branch_id": 1, "name": "X"}, ARJUN)
    ).proposal
    assert proposal is not None
    assert await CardStore(db).claim(proposal.card_id, ARJUN, registry.now())
    lease.expiry = timedelta(seconds=60)

    assert await registry.sweeps.reconcile() == []
    clock.step(timedelta(seconds=61))
    settled = await registry.sweeps.reconcile()

    assert [(c.card_id, c.status) for c in settled] == [(proposal.card_id, CardStatus.INTERRUPTED)]
