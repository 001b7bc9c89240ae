"""What the core and every surface share: the engine, the model, identities and the task set.

Holds references only; never talks to a chat platform or the database itself. ``Conversing`` is
what the core needs of a model (``bot.agent.Assistant`` is one), so a turn can be driven by the
real agent, the offline model or a scripted one in tests; ``ModelReply`` is one of its answers.
``Background`` is the task set the lanes (``bot.runtime.lanes``) run in after a request is answered;
``Metrics`` is what operators watch of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import structlog

from bot.adapter import Steps, Stream
from bot.runtime.inbox import Inbox
from bot.runtime.lanes import Conversations, Lane, LaneName
from bot.runtime.metrics import Metrics
from bot.runtime.turn_order import TurnOrder
from tools import ALL_TOOLS, Agent, Caller, Directory, ProcessLease, Proposal, Registry
from tools.db import Database

__all__ = ["TYPING_AFTER", "Background", "Conversing", "ModelReply", "Services"]

log = structlog.get_logger("bot.services")

# An answer within a second needs no "working on it": it is there before anyone looks for one.
TYPING_AFTER = 1.0


class ModelReply(Protocol):
    """One answer of the assistant: its words, and the cards it proposed (if any)."""

    @property
    def text(self) -> str: ...

    @property
    def proposals(self) -> Sequence[Proposal]: ...


class Conversing(Protocol):
    """A model the core can talk to: answer a person, be told what happened to a card, close.

    ``reply`` feeds ``stream`` the model's words as written, if it streams at all; its reply's
    text is then the whole answer, of which the stream shows the start (``bot.turns.answer``).
    """

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> ModelReply: ...

    async def record(self, *, conversation: str, text: str) -> None: ...

    async def aclose(self) -> None: ...


class Background:
    """Work started after an ack, run in its lane, kept referenced until done, awaited on shutdown.

    asyncio holds only weak references to tasks: a task nobody keeps can be collected mid-run,
    and an approval would stop between its write and the card update.
    """

    def __init__(
        self, *, turns: int = 16, presses: int = 8, typing: int = 8, chores: int = 8
    ) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        # Every lane is bounded; the rest wait their turn. Without a bound a burst of a thousand
        # messages started a thousand turns that queued on the database pool instead, and
        # those still waiting after its 30 s timeout were never answered (their delivery
        # already acknowledged, Slack would not resend it). With one shared bound, presses
        # queued behind model turns: with 30 turns waiting on a 25 s model an Approve was
        # still not shown after 40 s. Each kind of work now has its own lane (``bot.runtime.lanes``).
        self.lanes: dict[LaneName, Lane] = {
            "press": Lane("press", presses),
            "turn": Lane("turn", turns),
            "typing": Lane("typing", typing),
            "chores": Lane("chores", chores),
        }
        self.conversations = Conversations()

    def spawn(
        self,
        work: Coroutine[Any, Any, None],
        *,
        name: str,
        lane: Literal["press", "typing", "chores"] = "chores",
    ) -> asyncio.Task[None]:
        """Runs short ``work`` in ``lane`` (presses in ``press``; anything else short in ``chores``)."""
        self.lanes[lane].queue()
        return self._keep(self.lanes[lane].run(work), name)

    def press(self, work: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        """Runs a press (Approve, Reject, Edit): never queued behind a model turn."""
        return self.spawn(work, name=name, lane="press")

    def turn(
        self,
        work: Coroutine[Any, Any, None],
        *,
        name: str,
        conversation: str,
        queued: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> asyncio.Task[None]:
        """Runs a model turn after the turns queued before it in ``conversation``.

        When it cannot start at once (its conversation busy, or every turn slot taken),
        ``queued()`` runs now in the ``typing`` lane: the person sees the bot has their message
        while it waits, not only once it starts.
        """
        lane = self.lanes["turn"]
        free = not lane.would_wait(besides=self.conversations.held)
        before, mine = self.conversations.join(conversation)
        lane.queue()
        if queued is not None and (before is not None or not free):
            self.spawn(queued(), name=f"typing for {name}", lane="typing")
        return self._keep(self._in_order(work, conversation, before, mine), name)

    async def _in_order(
        self,
        work: Coroutine[Any, Any, None],
        conversation: str,
        before: asyncio.Future[None] | None,
        mine: asyncio.Future[None],
    ) -> None:
        lane = self.lanes["turn"]
        try:
            try:
                await self.conversations.wait(before)
            except asyncio.CancelledError:
                lane.abandon(work)
                raise
            await lane.run(work)
        finally:
            self.conversations.leave(conversation, mine)

    def _keep(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background_failed", task=task.get_name(), exc_info=task.exception())

    def __len__(self) -> int:
        return len(self._tasks)

    async def idle(self) -> None:
        """Waits, without cancelling anything, until no work is in flight (tests, benches)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def drain(self, grace: float = 30.0) -> None:
        """Waits for the work in flight (a shutdown must not cut an approval in half)."""
        while self._tasks:
            pending = list(self._tasks)
            _, late = await asyncio.wait(pending, timeout=grace)
            for task in late:
                task.cancel()
            if late:
                await asyncio.gather(*late, return_exceptions=True)


@dataclass
class Services:
    """The dependencies of every handler, built once at start-up.

    ``db`` and ``lease`` are the ones ``registry`` was built with: the bot keeps its own rows
    (receipts, conversations, turn holds, the inbox, installations) in that database under this
    process's lease, and reaches neither through the registry.
    """

    registry: Registry
    assistant: Conversing
    directory: Directory
    db: Database = field(kw_only=True)
    lease: ProcessLease = field(kw_only=True)
    audit_channel: str | None = None
    agent: Agent = ALL_TOOLS
    tasks: Background = field(default_factory=Background)
    metrics: Metrics = field(default_factory=Metrics)
    # Seconds a message waits for its answer before it is shown typing (``bot.turns.answer.Typing``).
    typing_after: float = TYPING_AFTER
    # One turn at a time per conversation across processes (``tasks`` orders them within one).
    turn_order: TurnOrder = field(init=False)
    # Messages acknowledged and not answered yet, answered by another process if this one dies.
    inbox: Inbox = field(init=False)

    def __post_init__(self) -> None:
        now = self.registry.now
        self.turn_order = TurnOrder(self.db, self.lease, clock=now)
        self.inbox = Inbox(self.db, self.lease, clock=now)
