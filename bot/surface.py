"""What the core and every surface share: the engine, the model, identities and the task set.

Holds references only; never talks to a chat platform or the database itself. ``Conversing`` is
what the core needs of a model (``bot.agent.Assistant`` is one), so a turn can be driven by the
real agent, the offline model or a scripted one in tests; ``ModelReply`` is one of its answers.
``Background`` is the task set both lanes run in after a request is answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from tools import Agent, Caller, Proposal, Registry
from tools.directory import Directory
from tools.merchant import DEFAULT_AGENT

__all__ = ["Background", "Conversing", "ModelReply", "Surface"]

log = structlog.get_logger("bot.surface")


class ModelReply(Protocol):
    """One answer of the assistant: its words, and the cards it proposed (if any)."""

    @property
    def text(self) -> str: ...

    @property
    def proposals(self) -> Sequence[Proposal]: ...


class Conversing(Protocol):
    """A model the core can talk to: answer a person, be told what happened to a card, close."""

    async def reply(self, *, conversation: str, caller: Caller, text: str) -> ModelReply: ...

    async def record(self, *, conversation: str, text: str) -> None: ...

    async def aclose(self) -> None: ...


class Background:
    """Work started after an ack, kept referenced until done and awaited on shutdown.

    asyncio holds only weak references to tasks: a task nobody keeps can be collected mid-run,
    and an approval would stop between its write and the card update.
    """

    def __init__(self, *, limit: int = 8) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        # At most ``limit`` pieces of work run at once; the rest wait their turn here. Without
        # it a burst of a thousand messages started a thousand turns that queued on the
        # database pool instead, and those still waiting after its 30 s timeout were never
        # answered (their delivery already acknowledged, Slack would not resend it).
        self._slots = asyncio.Semaphore(limit)

    def spawn(self, work: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        task = asyncio.create_task(self._in_turn(work), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    async def _in_turn(self, work: Coroutine[Any, Any, None]) -> None:
        async with self._slots:
            await work

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
class Surface:
    """The dependencies of every handler, built once at start-up."""

    registry: Registry
    assistant: Conversing
    directory: Directory
    audit_channel: str | None = None
    agent: Agent = DEFAULT_AGENT
    tasks: Background = field(default_factory=Background)
