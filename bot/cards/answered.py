"""What the answer above a card says once the card is decided; never posts or edits it.

The model's answer to a write ends "Not done yet: it is waiting for your approval on the card
below." That message stayed in the thread, word for word, above cards decided long ago, so a
person scrolling back read that something done was still waiting for them. Once the card is
decided, the answer is edited to say what became of it; the card below keeps the details.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["NOT_DONE_YET", "Answer", "settled_answer"]

# How the product's own answer to a proposal begins (``bot.agent.phrasing``): such an answer
# says nothing but that the card waits, and is replaced whole.
NOT_DONE_YET: Final = "Not done yet"


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer a turn posted above its card: its message id, and what it said besides the
    "Not done yet" line ("" for that line alone, the product's own answer)."""

    message: str
    said: str = ""

    @classmethod
    def of(cls, message: str | None, text: str) -> Answer | None:
        """The answer posted as ``message`` with ``text``, or None when it has no id."""
        if message is None:
            return None
        return cls(message, "" if text.startswith(NOT_DONE_YET) else text)


_BELOW: Final = "See the card below."
_SAID: Final = {
    "done": "Done: see the card below.",
    "failed": "Not done: it was approved but failed, so nothing was changed. " + _BELOW,
    "rejected": "Not done: it was not approved, so nothing was changed. " + _BELOW,
    "withdrawn": "Not done: it was withdrawn, so nothing was changed. " + _BELOW,
    "expired": "Not done: nobody approved it in time, so nothing was changed. " + _BELOW,
    "superseded": "Not done: a newer card replaced it. " + _BELOW,
    "interrupted": "Not done: it was interrupted before it ran. " + _BELOW,
    "outcome_unknown": "It is not known whether it was done: see the card below before asking again.",
}
_SEVERAL: Final = "Decided: the card below says what became of each."


def settled_answer(statuses: Sequence[str], said: str = "") -> str | None:
    """The answer's words once the card of these items is decided, or None while any waits.

    ``said`` is what the model's answer said besides the product's "Not done yet" line ("" for
    that line alone): it is kept under the new first line, so nothing the model said is lost.
    """
    if not statuses or any(s in ("pending", "executing") for s in statuses):
        return None
    kinds = set(statuses)
    first = _SAID.get(statuses[0], _SEVERAL) if len(kinds) == 1 else _SEVERAL
    return f"{first}\n\n{said}" if said else first
