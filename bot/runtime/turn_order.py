"""Runs one turn at a time per conversation across processes; never decides what a turn answers.

Within a process, ``bot.runtime.lanes.Conversations`` runs a thread's turns in the order they came.
Several workers or hosts each keep their own, so a follow-up that reached another process ran
at once, and its model never saw the question before it ("and the closed ones?" answered as if
asked alone). A turn therefore also holds its conversation in ``turn_holds`` while it runs:
inserting the row takes the turn, deleting it hands the turn on. A turn that finds the row
taken reads it, a little less often each time, until it is gone, then tries again. Across
processes this makes turns take turns; it does not promise arrival order (a follow-up whose
process reaches the row first goes first).

No thread is held for ever. A hold is taken over once its process's lease (``tools.cards.lease``)
has stopped or gone silent; a hold of this process that no turn here holds any more (its
hand-on failed) at once; and any hold older than a turn can last, whatever its lease says.
Waiting is bounded too: past ``WAIT_LIMIT_S``, or when the database cannot be asked, the turn
runs without the hold and says so in the log. Its history is still appended after the other
turn's (``bot.agent.history``); it only answers without seeing it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, cast

import structlog
from sqlalchemy import Table, bindparam, delete, insert, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from tools import Clock, LeaseState, ProcessLease, utcnow
from tools.db import LEASES, Database, TurnHoldRow

__all__ = ["HOLD_LIMIT", "WAIT_LIMIT_S", "TurnOrder"]

log = structlog.get_logger("bot.runtime.turn_order")

# A model run is cut off after 60 s (``bot.agent.assistant``); posting the answer and its cards
# takes seconds more. A hold older than this outlived its turn, whatever its process says.
HOLD_LIMIT = timedelta(minutes=5)
# How long a turn waits for another process's turn of its thread before it runs regardless.
WAIT_LIMIT_S = 120.0
_FIRST_PAUSE_S, _LONGEST_PAUSE_S = 0.05, 0.5

_HOLDS = cast("Table", TurnHoldRow.__table__)
_TAKE = insert(_HOLDS)
_HELD = (
    select(
        _HOLDS.c.turn,
        _HOLDS.c.holder,
        _HOLDS.c.since,
        LEASES.c.pid_space,
        LEASES.c.pid,
        LEASES.c.beat_at,
        LEASES.c.stopped_at,
    )
    .select_from(_HOLDS.outerjoin(LEASES, _HOLDS.c.holder == LEASES.c.holder))
    .where(_HOLDS.c.conversation == bindparam("conversation"))
)
_HAND_ON = delete(_HOLDS).where(
    _HOLDS.c.conversation == bindparam("conversation"), _HOLDS.c.turn == bindparam("turn")
)
# The holds this process's turns hold now, across its surfaces (they share its lease). A hold of
# this process that is not in here was left behind (its hand-on failed), and nothing will hand
# it on.
_HELD_HERE: set[str] = set()


class TurnOrder:
    """The ``turn_holds`` table, for the turns this process runs under ``lease``."""

    def __init__(
        self,
        db: Database,
        lease: ProcessLease,
        *,
        clock: Clock = utcnow,
        wait_limit: float = WAIT_LIMIT_S,
    ) -> None:
        self._db, self._lease, self._clock = db, lease, clock
        self.wait_limit = wait_limit

    @asynccontextmanager
    async def holding(self, conversation: str) -> AsyncIterator[None]:
        """Runs the block as ``conversation``'s only turn in any process (see the module)."""
        turn = uuid.uuid4().hex
        _HELD_HERE.add(turn)
        try:
            held = await self._take(conversation, turn)
            try:
                yield
            finally:
                if held:
                    await self._hand_on(conversation, turn)
        finally:
            _HELD_HERE.discard(turn)

    async def _take(self, conversation: str, turn: str) -> bool:
        """Whether the hold was taken; False when the wait ran out or the database could not
        be asked (the turn runs regardless: an answer without the hold beats no answer)."""
        deadline = time.monotonic() + self.wait_limit
        try:
            while not await self._insert(conversation, turn):
                if not await self._waited(conversation, deadline):
                    log.warning("turn_hold_waited_out", conversation=conversation)
                    return False
        except (SQLAlchemyError, OSError):
            log.warning("turn_hold_unavailable", conversation=conversation, exc_info=True)
            return False
        return True

    async def _waited(self, conversation: str, deadline: float) -> bool:
        """Reads the hold until it is gone or stale (True) or ``deadline`` passes (False):
        reading, not inserting, so a wait takes no write lock and logs no duplicate keys."""
        pause = _FIRST_PAUSE_S
        while time.monotonic() < deadline:
            if await self._cleared(conversation):
                return True
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE_S)
        return False

    async def _insert(self, conversation: str, turn: str) -> bool:
        row = {"conversation": conversation, "turn": turn, "holder": self._lease.holder}
        try:
            async with self._db.begin(write=True) as conn:
                await conn.execute(_TAKE, {**row, "since": self._clock()})
        except IntegrityError:
            return False  # another turn of this conversation holds it
        return True

    async def _cleared(self, conversation: str) -> bool:
        """Whether the hold is gone now: handed on meanwhile, or taken over here as stale."""
        async with self._db.begin() as conn:
            held = (await conn.execute(_HELD, {"conversation": conversation})).first()
        if held is None:
            return True
        if not self._stale(held):
            return False
        async with self._db.begin(write=True) as conn:
            taken = await conn.execute(_HAND_ON, {"conversation": conversation, "turn": held.turn})
        if taken.rowcount == 1:  # not when another turn took it over first
            log.warning(
                "turn_hold_taken_over",
                conversation=conversation,
                holder=held.holder,
                since=held.since,
            )
        return True

    def _stale(self, held: Any) -> bool:
        now = self._clock()
        if held.since <= now - HOLD_LIMIT:
            return True
        if held.holder == self._lease.holder:
            return held.turn not in _HELD_HERE  # left behind here: nothing will hand it on
        if held.beat_at is None:
            return False  # a process whose lease row is not written yet: judged by age alone
        state = LeaseState(held.holder, held.pid_space, held.pid, held.beat_at, held.stopped_at)
        return self._lease.gone(state, now)

    async def _hand_on(self, conversation: str, turn: str) -> None:
        try:
            async with self._db.begin(write=True) as conn:
                await conn.execute(_HAND_ON, {"conversation": conversation, "turn": turn})
        except (SQLAlchemyError, OSError):
            # The answer is out. This process's next turn of the thread takes the hold over at
            # once; another process's waits until it is stale or its wait runs out.
            log.exception("turn_hold_not_handed_on", conversation=conversation)
