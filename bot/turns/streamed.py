"""An answer streamed as the model writes it: what a stream did not show, and when the typing
indicator goes; never posts anything itself.

``bot.turns.answer`` hands the model a surface's stream (``bot.adapter.stream_of``), closes it
before the cards are posted, and posts whatever it did not show: a whole answer where nothing
streamed (the offline model, a surface that cannot), the rest of one whose stream failed midway.
"""

from __future__ import annotations

from typing import Protocol

import structlog

from bot.adapter import Stream

__all__ = ["Settles", "Settling", "closed", "unshown"]

log = structlog.get_logger("bot.turns.answer")


class Settles(Protocol):
    """A turn's typing indicator (``bot.turns.answer.Typing``), as a stream settles it."""

    @property
    def settled(self) -> bool: ...

    async def off(self) -> None: ...


async def closed(stream: Stream) -> str:
    """Ends a stream and returns what it showed; a stream that broke its word and raised is
    taken to have shown nothing, so the whole answer is posted (twice beats lost)."""
    try:
        return await stream.close()
    except Exception:  # a surface's stream must never cost the answer
        log.exception("stream_close_failed")
        return ""


def unshown(text: str, shown: str) -> str:
    """The part of an answer a stream did not show (all of it when nothing was), to post.

    A stream that failed midway showed the answer's start: the rest follows as a message of
    its own, so nothing is lost and nothing is said twice.
    """
    seen = shown.rstrip()
    if not seen:
        return text
    if text.startswith(seen):
        return text[len(seen) :].strip()
    # Not the start of the answer (it never should be): the whole answer, rather than a part.
    log.warning("stream_not_a_prefix", shown=len(seen), text=len(text))
    return text


class Settling:
    """A turn's stream that settles its typing indicator once words appear: the answer is
    visibly on its way, and the hourglass would only say so twice."""

    def __init__(self, stream: Stream, typing: Settles) -> None:
        self.stream, self.typing = stream, typing

    async def append(self, text: str) -> None:
        if not self.typing.settled:
            await self.typing.off()
        await self.stream.append(text)

    async def close(self) -> str:
        return await self.stream.close()

    @property
    def message(self) -> str | None:
        return self.stream.message
