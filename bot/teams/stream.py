"""Streams one answer into a Teams 1:1 chat: what the agent is doing, then its words as written; never decides what is said.

Teams streams a reply only in a 1:1 chat (a channel or a group chat refuses it), so the adapter
makes a stream only there (``TeamsAdapter.stream``). The wire is the Agents SDK's: typing
activities carrying a ``streaminfo`` entity, ``informative`` (the step the agent is on) until
the words start and ``streaming`` after, each with a ``streamSequence`` one higher than the
last and each after the first naming the stream by the id Teams gave the first; then one
message, ``final``, with the whole answer, which becomes the reply people keep. Each streamed
update carries all the words so far: Teams refuses one that does not.

The SDK's own ``StreamingResponse`` is not used: it sleeps a full second after every send, and
a connector error midway ends its queue with the final message unsent (the answer lost). Here
one task sends at most one update per ``interval`` (Teams throttles a stream to about one a
second), the newest state only, so the tokens in between are sent together. A failed update
stops the updates, never the answer: ``close`` still ends the stream with the whole answer, and
when Teams refuses that too, says how much people saw, so the core posts the rest once
(``bot.turns.streamed``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Literal, Protocol

import structlog
from microsoft_agents.activity import (
    Activity,
    ActivityTypes,
    ResourceResponse,
    StreamInfo,
    TextFormatTypes,
)

from bot.cards.cardspec import clip
from bot.teams import texts
from bot.teams.outbound import FAILURES

__all__ = ["INTERVAL", "Sends", "TeamsStream"]

log = structlog.get_logger("bot.teams.stream")

# Seconds between two sends of one stream: Teams refuses a stream updated much faster.
INTERVAL = 1.0
_INFORMATIVE_CHARS = 1000  # Teams' limit for an informative update
# Seconds one send may take: a Bot Connector call that hung held the stream's end, and so the
# turn's cards and every later message of the conversation behind it. Past it, the send
# counts as failed (as Slack's stream does), and the rest of the answer is posted.
CALL_TIMEOUT = 10.0
_FAILED = (*FAILURES, TimeoutError)


class Sends(Protocol):
    """Where a stream's activities go: a turn's ``TurnContext``, in its own conversation."""

    async def send_activity(self, activity: Activity, /) -> ResourceResponse | None: ...


class TeamsStream:
    """One answer streamed in the conversation of ``context`` (a 1:1 chat)."""

    def __init__(self, context: Sends, *, interval: float = INTERVAL) -> None:
        self.context, self.interval = context, interval
        self.text = ""  # every word appended, in order
        self.shown = ""  # the words of the last streamed update Teams took
        self.stream_id: str | None = None  # the id Teams gave the stream's first update
        self.ended = False  # the final message went out: the stream is a message now
        self._status: str | None = None  # the informative update waiting to be sent
        self._informed = False  # an informative update was asked for
        self._sequence = 0
        self._broken = False  # Teams refused an update: nothing more is streamed
        self._closing = asyncio.Event()
        self._wake = asyncio.Event()
        self._pump: asyncio.Task[None] | None = None
        self._last = -self.interval  # when Teams answered the last update (``time.monotonic``)
        self._result: str | None = None

    @property
    def open(self) -> bool:
        """Teams shows this stream and is waiting for its final message."""
        return self.stream_id is not None and not self.ended and not self._broken

    def inform(self, text: str, *, first: bool = False) -> None:
        """Shows what the agent is doing, until its words start; returns at once.

        ``first``: only if nothing was shown yet (a step already shown says more).
        """
        if self.text or self._closing.is_set() or self._broken or (first and self._informed):
            return
        self._informed = True
        self._status = clip(text, _INFORMATIVE_CHARS)
        self._kick()

    async def append(self, text: str) -> None:
        """Adds the model's next words; they are sent with the next update (never raises)."""
        if self._closing.is_set():
            return
        self.text += text
        self._kick()

    @property
    def message(self) -> str | None:
        """The answer's message once the stream is one (Teams keeps the stream's id for it)."""
        return self.stream_id if self.ended else None

    async def close(self) -> str:
        """Ends the stream with the whole answer; returns the words people can see in it.

        Everything appended when Teams took the final message; when it did not, the words of
        the last update it took ("" when none), so the core posts the rest.
        """
        if self._result is None:
            await self._stop()
            if not self.text:
                self._result = ""  # nothing said: what is posted next ends the stream (``end``)
            elif self.stream_id is not None and await self._final(self.text):
                self._result = self.text
            else:
                self._result = self.shown
        return self._result

    async def end(self, text: str) -> bool:
        """Ends a stream that showed only informative updates with ``text`` as its message;
        False when there is none to end (or Teams refused it), so ``text`` is posted as usual."""
        await self._stop()
        if not self.open or self.shown:
            return False
        return await self._final(text)

    def _kick(self) -> None:
        self._wake.set()
        if self._pump is None:
            self._pump = asyncio.create_task(self._run(), name="teams stream")

    async def _stop(self) -> None:
        """No update is sent from now on; one on its way is let finish (Teams keeps order)."""
        self._closing.set()
        self._wake.set()
        if self._pump is not None:
            await self._pump

    async def _run(self) -> None:
        while not self._closing.is_set() and not self._broken:
            update = self._next()
            if update is None:
                self._wake.clear()
                await self._wake.wait()
                continue
            await self._send(*update)
            with contextlib.suppress(TimeoutError):
                # The throttle: the tokens written meanwhile go in the next update together.
                async with asyncio.timeout(self.interval):
                    await self._closing.wait()

    def _next(self) -> tuple[Activity, str | None] | None:
        """The update to send now (and the words it shows), or None when there is nothing new."""
        if self.text:
            self._status = None  # the words replace what the agent was doing
            # Past a message's length the final message carries the answer, cut as any reply.
            if self.text == self.shown or len(self.text) > texts.MESSAGE_CHARS:
                return None
            return self._update("streaming", self.text), self.text
        if self._status is None:
            return None
        status, self._status = self._status, None
        return self._update("informative", status), None

    def _update(self, kind: Literal["informative", "streaming"], text: str) -> Activity:
        self._sequence += 1
        info = StreamInfo(stream_type=kind, stream_sequence=self._sequence)
        if self.stream_id is not None:
            info.stream_id = self.stream_id
        return Activity(
            type=ActivityTypes.typing,
            text=text,
            text_format=TextFormatTypes.plain,
            entities=[info],
        )

    async def _send(self, update: Activity, words: str | None) -> None:
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                sent: ResourceResponse | None = await self.context.send_activity(update)
        except _FAILED as failed:
            self._broken = True
            log.warning("stream_update_failed", error=_error(failed), sequence=self._sequence)
            return
        finally:
            # From when Teams answered: a slow answer must not bring the next send closer.
            self._last = time.monotonic()
        if self.stream_id is None:
            self.stream_id = str(sent.id) if sent is not None and sent.id else None
            self._broken = self.stream_id is None  # no id: no later update could name it
        if words is not None:
            self.shown = words

    async def _final(self, text: str) -> bool:
        """Sends the message that ends the stream with ``text``; whether Teams took it."""
        assert self.stream_id is not None, "only a stream Teams started is ended"
        await asyncio.sleep(max(0.0, self._last + self.interval - time.monotonic()))
        final = Activity(
            type=ActivityTypes.message,
            text=texts.reply(text),
            text_format=TextFormatTypes.plain,
            entities=[StreamInfo(stream_type="final", stream_id=self.stream_id)],
        )
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                await self.context.send_activity(final)
        except _FAILED as failed:
            self._broken = True
            log.warning("stream_final_failed", error=_error(failed), shown=len(self.shown))
            return False
        self.ended = True
        log.info("answer_streamed", updates=self._sequence, chars=len(text))
        return True


def _error(failed: Exception) -> str:
    status = getattr(failed, "status", None)
    return f"http {status}" if status else type(failed).__name__
