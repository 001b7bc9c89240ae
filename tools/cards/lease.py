"""Names the process that executes a card and keeps its heartbeat; never settles a card itself.

Every approval claims its card under this process's ``holder`` id. A running server keeps a
lease row for that id and refreshes it every few seconds. The reconciler (``tools.keeping.reconcile``)
settles an ``executing`` card only when its holder is gone: the lease was stopped, its last
heartbeat is older than the grace period, or, on the same machine, its process no longer
exists. A press still in flight on another live process, the old one of a rolling deploy for
instance, is left to finish.

It never settles "every card claimed before this server started": in a rolling deploy that
would declare the old process's presses in flight interrupted while they are still running.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path

import structlog
from sqlalchemy import delete, update
from sqlalchemy.exc import SQLAlchemyError

from tools.cards.tokens import Clock, utcnow
from tools.db import LEASES, Database

__all__ = ["RECONCILE_AFTER", "LeaseState", "ProcessLease"]

log = structlog.get_logger("countersign.lease")

# How long a claim may go without its process showing signs of life before it is settled.
RECONCILE_AFTER = timedelta(seconds=60)
# Stopped or silent leases older than this are deleted; their cards are judged by claim time.
_FORGET_AFTER = timedelta(days=1)
_LEASES = LEASES


@dataclass(frozen=True, slots=True)
class LeaseState:
    """A lease row as the reconciler reads it, joined to a card's ``holder``."""

    holder: str
    pid_space: str
    pid: int
    beat_at: datetime
    stopped_at: datetime | None


class ProcessLease:
    """This process's id on the cards it claims, its heartbeat row, and its writes in flight.

    A server calls ``start`` before it accepts presses, ``beat`` every ``beat_every``, and
    ``stop`` after its work in flight has drained. A registry that is never started (a command,
    a test) still stamps its id on claims; with no row, the reconciler treats those claims as
    made by an unknown process and waits out the grace period from the claim.

    Args:
        db: where the lease row lives.
        clock: the time source.
        expiry: how old a heartbeat must be for its process to count as gone.
    """

    def __init__(
        self, db: Database, *, clock: Clock = utcnow, expiry: timedelta = RECONCILE_AFTER
    ) -> None:
        self.holder = uuid.uuid4().hex
        self.expiry = expiry
        self._db, self._clock = db, clock
        # Per card, the presses of it running here now (a Counter: a losing press of a card
        # must not unmark the winning one).
        self._running: Counter[str] = Counter()
        self._starts = 0

    @property
    def beat_every(self) -> timedelta:
        """Often enough that two missed beats are still well inside ``expiry``."""
        return min(self.expiry / 4, timedelta(seconds=5))

    async def start(self) -> None:
        """Writes this process's lease row (and forgets leases silent for a day).

        Several servers in one process (the tests run some) share its lease: each ``start`` is
        matched by a ``stop``, and the lease stops with the last. When the database cannot be
        reached, this logs and returns: the heartbeat writes the row once it can, and until then
        this process's claims count as an unknown process's, settled only after the grace
        period from the claim.
        """
        self._starts += 1
        try:
            await self._write_row()
        except (SQLAlchemyError, OSError) as failed:
            log.warning("lease_start_failed", holder=self.holder, error=type(failed).__name__)

    async def beat(self) -> None:
        """Says this process is alive; writes the row again if it was forgotten meanwhile."""
        stmt = update(_LEASES).where(_LEASES.c.holder == self.holder)
        async with self._db.begin() as conn:
            result = await conn.execute(stmt.values(beat_at=self._clock()))
        if result.rowcount == 0:
            await self._write_row()

    async def _write_row(self) -> None:
        now = self._clock()
        row = {"pid_space": pid_space(), "pid": os.getpid(), "beat_at": now, "stopped_at": None}
        async with self._db.begin() as conn:
            await conn.execute(delete(_LEASES).where(_LEASES.c.beat_at < now - _FORGET_AFTER))
            again = update(_LEASES).where(_LEASES.c.holder == self.holder).values(**row)
            if (await conn.execute(again)).rowcount == 0:
                await conn.execute(
                    _LEASES.insert().values(holder=self.holder, started_at=now, **row)
                )

    async def stop(self) -> None:
        """Marks this process gone, so the cards it left executing are settled at once.

        Call it after draining: a card still executing under this id afterwards was left
        half-way (the database dropped during its write, say), not in flight. When the database
        cannot be reached, the lease simply runs out after ``expiry``; shutdown goes on.
        """
        self._starts -= 1
        if self._starts > 0:
            return  # another server of this process still runs on this lease
        stmt = update(_LEASES).where(_LEASES.c.holder == self.holder)
        try:
            async with self._db.begin() as conn:
                await conn.execute(stmt.values(stopped_at=self._clock()))
        except (SQLAlchemyError, OSError) as failed:
            log.warning("lease_stop_failed", holder=self.holder, error=type(failed).__name__)

    @contextmanager
    def executing(self, card_id: str) -> Iterator[None]:
        """Marks a press of ``card_id`` as running here, from before its claim to its end."""
        self._running[card_id] += 1
        try:
            yield
        finally:
            self._running[card_id] -= 1
            if self._running[card_id] <= 0:
                del self._running[card_id]

    def is_running(self, card_id: str) -> bool:
        return card_id in self._running

    def running_here(self, state: LeaseState) -> bool:
        """Whether the process holding ``state`` is certainly running now, on this machine:
        not stopped, and its pid alive in this pid space, however long it has been silent."""
        if state.stopped_at is not None or state.pid_space != pid_space():
            return False
        return _alive(state.pid)

    def gone(self, state: LeaseState, now: datetime) -> bool:
        """Whether the process holding ``state`` has stopped, gone silent, or (here) died."""
        if state.holder == self.holder:
            return False  # this process; its own cards are judged by ``is_running``
        if state.stopped_at is not None or state.beat_at <= now - self.expiry:
            return True
        return state.pid_space == pid_space() and not _alive(state.pid)


@cache
def pid_space() -> str:
    """Which processes this one can see by pid: this boot of this kernel, this pid namespace.

    Two processes with the same value see the same pids, so one can tell the other has died.
    Where that cannot be known, the value is unique to this process and the shortcut is off.
    """
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return f"unknown:{uuid.uuid4().hex}"
    return f"{boot}/{namespace}"


def _alive(pid: int) -> bool:
    """False only when ``pid`` certainly does not run: no such process, or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    # "pid (comm) S …": the state follows the last ")", as comm may itself hold one.
    state = stat.rpartition(")")[2].split()[:1]
    return state not in (["Z"], ["X"])
