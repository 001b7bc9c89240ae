"""Keeps every acknowledged message until it is answered, so a process that dies never loses one.

Never decides what to answer. Slack does not send an event again once it got its 200, so
without this a server killed between its ack and its answer leaves the person unanswered for
good. A message is stored before its ack (``keep``), under this process's lease holder; the
turn that claims its delivery
takes it over in the claim's own transaction (``started_on``); its answer going out marks it
answered (``answered``). Another process finding a message unanswered whose holder is gone
(``left``: the lease stopped, went silent, or its process died on this machine) takes it with
one conditional UPDATE (``take``) and answers it: from the start when no turn had claimed it,
or by telling the person it was lost when one had (what that turn did is not known).

How soon: ``answer_left`` runs with every sweep (``bot.server``, every ``ProcessLease.beat_every``:
a quarter of the lease's expiry, at most 5 s). A holder killed on this machine is gone at that
sweep (its pid is dead), so its messages are answered within one sweep period; a holder on
another machine is gone once silent for the lease's expiry, so within the expiry and a period.

The ack's write is one INSERT, batched: rows kept while a transaction is on its way go in the
next one, so a burst of a thousand events commits a few dozen transactions, not a thousand;
the marks of answers go in the same transactions.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

import structlog
from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection

from tools import Clock, LeaseState, ProcessLease, utcnow
from tools.db import INBOX, LEASES, Database

__all__ = ["KEEP_WAIT_S", "Inbox", "Kept", "Resumes", "answer_left"]

log = structlog.get_logger("bot.runtime.inbox")

# The longest an ack waits for its message to be stored.
KEEP_WAIT_S = 1.0
# Answered messages are forgotten after this (the receipts still dedupe their deliveries),
# looked for at most this often.
_FORGET_AFTER = timedelta(days=1)
_FORGET_EVERY_S = 3600.0
_LEFT = (
    select(
        INBOX,
        LEASES.c.pid_space.label("lease_pid_space"),
        LEASES.c.pid.label("lease_pid"),
        LEASES.c.beat_at.label("lease_beat_at"),
        LEASES.c.stopped_at.label("lease_stopped_at"),
    )
    .select_from(INBOX.outerjoin(LEASES, INBOX.c.holder == LEASES.c.holder))
    .where(INBOX.c.answered_at.is_(None))
    .order_by(INBOX.c.received_at)
)
_STARTED = (
    update(INBOX)
    .where(INBOX.c.key == bindparam("k"), INBOX.c.answered_at.is_(None))
    .values(holder=bindparam("holder"), started_at=bindparam("at"))
)
_ANSWERED = (
    update(INBOX)
    .where(INBOX.c.key.in_(bindparam("keys", expanding=True)), INBOX.c.answered_at.is_(None))
    .values(answered_at=bindparam("at"))
)


@dataclass(frozen=True, slots=True)
class Kept:
    """A message kept until answered: its key (the delivery's), where it came from, what the
    surface stored to answer it again, and whether a turn had claimed it."""

    key: str
    platform: str
    installation: str
    message: dict[str, Any]
    holder: str
    received_at: datetime
    started: bool

    @property
    def cards(self) -> tuple[str, ...]:
        """The cards its turn proposed, as recorded before any was posted (``proposed``)."""
        return tuple(str(c) for c in self.message.get("cards") or ())


@runtime_checkable
class Resumes(Protocol):
    """A surface that keeps its messages in the inbox, and answers one a gone process left."""

    async def resume(self, kept: Kept) -> None: ...


async def answer_left(inbox: Inbox, surfaces: Mapping[str, object]) -> int:
    """Answers, once, every kept message a gone process left unanswered; how many it took.

    Each is taken by one conditional UPDATE, so of several processes sweeping at once one
    answers it. Run at start-up and with the other sweeps (``bot.server``).
    """
    await inbox.mark_again()
    taken = 0
    for kept in await inbox.left():
        surface = surfaces.get(kept.platform)
        if not isinstance(surface, Resumes) or not await inbox.take(kept):
            continue
        taken += 1
        try:
            await surface.resume(kept)
        except (SQLAlchemyError, OSError) as failed:
            # The database went down again midway: taken by this process and unanswered, it
            # is tried again by the next sweep instead of waiting for this process to die.
            log.warning("inbox_resume_cut", key=kept.key, error=type(failed).__name__)
            inbox.release(kept.key)
        except Exception:  # logged in full; the next message is still answered
            log.exception("inbox_resume_failed", key=kept.key)
    return taken


class Inbox:
    """The ``inbox`` table, for the messages this process takes in under ``lease``."""

    def __init__(self, db: Database, lease: ProcessLease, *, clock: Clock = utcnow) -> None:
        self._db, self._lease, self._clock = db, lease, clock
        self._queued: list[tuple[dict[str, Any] | str, asyncio.Future[bool]]] = []
        self._writing: asyncio.Task[None] | None = None
        # Keys marked answered by a turn still running, and those whose mark failed (the
        # database down): the sweep marks them again (``mark_again``).
        self._marked: set[str] = set()
        self._unmarked: set[str] = set()
        # Keys of messages this process left to the sweep (``release``).
        self._released: set[str] = set()
        self._forget_after = 0.0  # time.monotonic() from which old answers are forgotten

    async def keep(
        self, key: str, *, platform: str, installation: str, message: dict[str, Any]
    ) -> None:
        """Stores a message before its ack: returns once stored, or after ``KEEP_WAIT_S``.

        Kept already (a delivery again, or the same message as another event) changes nothing.
        The ack waits no longer than that: a pool busy with a burst's turns must not push it
        past Slack's 3 s. A row still on its way commits before any mark of its answer (one
        writer, in order); one the database refused (it is down) leaves the message answered
        as before, unkept, and its marks match nothing.
        """
        row = {
            "key": key[:255],
            "platform": platform,
            "installation": installation,
            "message": message,
            "holder": self._lease.holder,
            "received_at": self._clock(),
        }
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue(row), KEEP_WAIT_S)

    async def _queue(self, write: dict[str, Any] | str) -> bool:
        """Queues a row to insert (or a key to mark answered) for the next transaction; whether
        it committed. Everything queued while one transaction is on its way goes in the next."""
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queued.append((write, done))
        if self._writing is None:
            self._writing = asyncio.create_task(self._write(), name="inbox")
        return await asyncio.shield(done)  # a waiter giving up never cancels the write

    async def _write(self) -> None:
        """Writes whatever was queued meanwhile, one transaction at a time, until nothing waits."""
        try:
            while self._queued:
                batch, self._queued = self._queued, []
                committed = False
                try:
                    committed = await self._commit([write for write, _ in batch])
                finally:
                    # Whatever ended the write (even a cancellation), no waiter waits for good.
                    for _, done in batch:
                        if not done.done():
                            done.set_result(committed)
        finally:
            self._writing = None

    async def _commit(self, writes: list[dict[str, Any] | str]) -> bool:
        rows = [write for write in writes if isinstance(write, dict)]
        keys = [write for write in writes if isinstance(write, str)]
        try:
            async with self._db.begin(write=True) as conn:
                if rows:
                    pg = conn.dialect.name == "postgresql"
                    insert = postgresql.insert if pg else sqlite.insert
                    await conn.execute(insert(INBOX).on_conflict_do_nothing(), rows)
                if keys:
                    await conn.execute(_ANSWERED, {"keys": keys, "at": self._clock()})
        except (SQLAlchemyError, OSError) as failed:
            # A row not kept: its message is answered as before, unkept. A mark not written:
            # the sweep writes it again, else the message is answered again once we are gone.
            log.warning("inbox_write_failed", kept=len(rows), error=type(failed).__name__)
            self._unmarked.update(keys)
            return False
        return True

    async def started_on(self, conn: AsyncConnection, key: str | None) -> None:
        """Inside the transaction that claims a delivery: this process answers it from now."""
        if key is not None:
            params = {"k": key[:255], "holder": self._lease.holder, "at": self._clock()}
            await conn.execute(_STARTED, params)

    async def proposed(self, key: str | None, card_ids: list[str]) -> bool:
        """Records the cards its turn proposed, before it posts its answer or any of them;
        whether they are recorded (not when the message was never kept).

        Whoever answers the message again finishes these (``Resumes``): a turn killed while its
        cards went out, or cut off by the database going down (``release``).
        """
        if key is None or not card_ids:
            return False
        read = select(INBOX.c.message).where(INBOX.c.key == key[:255]).with_for_update()
        async with self._db.begin(write=True) as conn:
            message = await conn.scalar(read)
            if message is None:
                return False  # never kept (the database refused it): answered as before, unkept
            kept = {**dict(message), "cards": card_ids}
            await conn.execute(update(INBOX).where(INBOX.c.key == key[:255]).values(message=kept))
        return True

    def release(self, key: str | None) -> None:
        """Leaves a message this process could not finish to the sweep, as if its holder were
        gone: its turn's cards were recorded (``proposed``) and the database went down while
        they went out. Its answer is not marked until the sweep has finished them.

        Held here, the message was marked answered with a card posted and never recorded (its
        buttons live after its decision) or never posted, and nobody finished it: it is taken
        by the next sweep that reaches the database, this process's or another's.
        """
        if key is not None:
            self._released.add(key[:255])

    async def answered(self, key: str | None, *, last: bool = False) -> None:
        """Marks the message answered: its turn posted, or the person was told it failed.

        Called by the turn that claimed it (a duplicate delivery marks nothing) as its answer
        goes out, and once more as it ends (``last``), which writes nothing if it was marked.
        """
        if key is None:
            return
        key = key[:255]
        if key in self._released:
            return  # the sweep answers it (``release``)
        if key in self._marked:
            if last:
                self._marked.discard(key)
            return
        if not last:
            self._marked.add(key)
        await self._queue(key)

    async def mark_again(self) -> None:
        """Marks the answers whose mark failed earlier (for the sweep)."""
        keys, self._unmarked = sorted(self._unmarked), set()
        await asyncio.gather(*(self._queue(key) for key in keys))

    async def left(self) -> list[Kept]:
        """The unanswered messages whose holder is gone; forgets the answered of a day ago."""
        now = self._clock()
        forgotten = INBOX.c.answered_at < now - _FORGET_AFTER
        async with self._db.engine.connect() as conn:
            rows = (await conn.execute(_LEFT)).all()
            old = await conn.scalar(select(INBOX.c.key).where(forgotten).limit(1))
        if old is not None and time.monotonic() >= self._forget_after:
            # At most hourly, and only when there is something to forget: a write every sweep
            # took SQLite's write lock every few seconds, and a library writing in a deferred
            # transaction (Slack's OAuth state store) met "database is locked".
            self._forget_after = time.monotonic() + _FORGET_EVERY_S
            async with self._db.begin(write=True) as conn:
                await conn.execute(delete(INBOX).where(forgotten))
        return [_kept(row) for row in rows if self._gone(row, now)]

    def _gone(self, row: Any, now: datetime) -> bool:
        if row.holder == self._lease.holder:
            return row.key in self._released  # else in flight here
        if row.lease_beat_at is None:  # a process whose lease row was never written
            return bool(row.received_at <= now - self._lease.expiry)
        state = LeaseState(
            row.holder, row.lease_pid_space, row.lease_pid, row.lease_beat_at, row.lease_stopped_at
        )
        if self._lease.running_here(state):
            # Running here, only silent: while the database restarts no process can beat, and
            # taking a message from a live one had it answered twice (19 in a soak). A
            # process on another machine can only be judged by its silence.
            return False
        return self._lease.gone(state, now)

    async def take(self, kept: Kept) -> bool:
        """Takes a left message for this process, unless another took it since it was read."""
        stmt = (
            update(INBOX)
            .where(
                INBOX.c.key == kept.key,
                INBOX.c.holder == kept.holder,
                INBOX.c.answered_at.is_(None),
            )
            .values(holder=self._lease.holder)
        )
        async with self._db.begin(write=True) as conn:
            taken = bool((await conn.execute(stmt)).rowcount == 1)
        self._released.discard(kept.key)  # taken (by us or another): answered from here
        return taken


def _kept(row: Any) -> Kept:
    return Kept(
        row.key,
        row.platform,
        row.installation,
        dict(row.message),
        row.holder,
        row.received_at,
        row.started_at is not None,
    )
