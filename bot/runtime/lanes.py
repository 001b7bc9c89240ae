"""Lanes: bounded queues the task set runs background work in, so a press never waits behind a model.

A lane has a fixed number of slots; work beyond them waits, first come first served. Each kind
of work has its own lane, so one kind filling its slots holds up only itself:

- ``press``: Approve, Reject (and later Edit) presses. Short: a few database transactions and
  a card update. Never shares a slot with a model turn.
- ``turn``: model turns. A real model holds a slot for seconds to a minute, so turns are bounded
  overall, and the turns of one conversation run one at a time, in the order they arrived (two
  answers to one thread must not race over its history or arrive out of order).
- ``typing``: the typing indicator, shown at once on a message that has to wait for a turn slot,
  and on any other message still unanswered after a second (``bot.turns.answer.Typing``).
- ``chores``: everything else short: ``/countersign``, the App Home, settling cards.

Lanes never decide anything and never look inside the work they run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Literal

__all__ = ["LANES", "Conversations", "Lane", "LaneName"]

LaneName = Literal["press", "turn", "typing", "chores"]
LANES: tuple[LaneName, ...] = ("press", "turn", "typing", "chores")


class Lane:
    """``limit`` slots; work queued beyond them waits in arrival order.

    ``queue`` is called when work is handed over (synchronously, in the request that brought
    it), so ``waiting`` counts work whose task has not started yet too: a gauge read mid-burst
    shows the real queue, and ``would_wait`` answers before the task first runs.
    """

    def __init__(self, name: LaneName, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"lane {name} needs at least one slot, not {limit}")
        self.name, self.limit = name, limit
        self._slots = asyncio.Semaphore(limit)
        self.waiting = 0
        self.running = 0

    def queue(self) -> None:
        """Counts one more piece of work waiting for a slot (call once, then ``run`` it)."""
        self.waiting += 1

    def would_wait(self, *, besides: int = 0) -> bool:
        """True when work queued now would find no free slot (``besides`` queued but not here)."""
        return self.running + self.waiting - besides >= self.limit

    def abandon(self, work: Coroutine[Any, Any, None]) -> None:
        """Drops queued ``work`` that will never run (cancelled before its turn came)."""
        self.waiting -= 1
        work.close()  # never started: without this it warns "was never awaited"

    async def run(self, work: Coroutine[Any, Any, None]) -> None:
        """Runs queued ``work`` in a slot once one is free; closes it unrun when cancelled first."""
        try:
            await self._slots.acquire()
        except asyncio.CancelledError:
            work.close()  # never started: without this it warns "was never awaited"
            raise
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            await work
        finally:
            self.running -= 1
            self._slots.release()


class Conversations:
    """Orders the turns of each conversation: each waits for the one that arrived before it.

    Keeps one entry per conversation with a turn queued or running, so the map does not grow
    with every conversation ever seen.
    """

    def __init__(self) -> None:
        self._last: dict[str, asyncio.Future[None]] = {}
        self.held = 0  # turns waiting for an earlier turn of their conversation

    def join(self, key: str) -> tuple[asyncio.Future[None] | None, asyncio.Future[None]]:
        """The turn before this one in ``key`` (None if none is queued or running), and this one's."""
        before = self._last.get(key)
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._last[key] = mine
        if before is not None:
            self.held += 1
        return before, mine

    async def wait(self, before: asyncio.Future[None] | None) -> None:
        """Waits for the turn before; ``asyncio.wait`` so a cancelled waiter does not cancel it."""
        if before is None:
            return
        try:
            await asyncio.wait([before])
        finally:
            self.held -= 1

    def leave(self, key: str, mine: asyncio.Future[None]) -> None:
        """Lets the next turn of ``key`` go, whether this one finished, failed or was cancelled."""
        if not mine.done():
            mine.set_result(None)
        if self._last.get(key) is mine:
            del self._last[key]

    def __len__(self) -> int:
        return len(self._last)
