"""Feeds the model's words to a surface's stream as they are written; never a tool call, never a card.

pydantic-ai hands a run's events to an ``event_stream_handler``; ``Feed`` keeps only the text
parts' deltas and appends them to the ``bot.adapter.Stream``. Tool calls (and so the cards they
propose) never reach it, and the model never sees a signed token, so none can be streamed. The
text of each model response is one paragraph: a model that says "Let me look." before a tool
call and the answer after it is read as two paragraphs, in the order written.

A model that cannot stream (the offline model answers whole) is run without a feed, and the
turn is posted as one message, as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

import structlog
from pydantic_ai import RunContext
from pydantic_ai.messages import (
    AgentStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import FunctionModel

from bot.adapter import Stream

__all__ = ["Feed", "streams"]

log = structlog.get_logger(__name__)

_PARAGRAPH = "\n\n"


def streams(model: Model) -> bool:
    """Whether the model writes its answer in pieces: a function model only with a stream
    function (the offline model has none); every provider's model does."""
    if isinstance(model, FunctionModel):
        return model.stream_function is not None
    return True


class Feed:
    """One turn's text on its way to a stream; ``text`` is all of it, as fed, in order."""

    def __init__(self, stream: Stream) -> None:
        """Feeds ``stream``; pass the object itself as the run's ``event_stream_handler``."""
        self.stream = stream
        self.text = ""
        self._part: int | None = None  # the response part being written
        self._new_response = True
        self.broken = False  # the stream failed: the words go on being kept, not shown

    async def __call__(self, ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        """The run's event handler: called once per model request (and per tool step)."""
        self._response_begins()
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                await self._started(event.index, event.part.content)
            elif (
                isinstance(event, PartDeltaEvent)
                and isinstance(event.delta, TextPartDelta)
                and event.index == self._part
            ):
                await self._add(event.delta.content_delta)

    def _response_begins(self) -> None:
        self._new_response, self._part = True, None

    async def _started(self, index: int, content: str) -> None:
        self._part = index
        if self._new_response and self.text:
            # Another response's words: a paragraph of their own, never run into the last.
            await self._add(_PARAGRAPH)
        self._new_response = False
        await self._add(content)

    async def _add(self, text: str) -> None:
        if not self.text:
            text = text.lstrip()  # an answer never starts with blank lines
        if not text:
            return
        self.text += text
        if self.broken:
            return
        try:
            await self.stream.append(text)
        except Exception:  # a stream must not end the turn: what it did not show is posted
            log.exception("agent.stream_failed")
            self.broken = True
