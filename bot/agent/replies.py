"""What the assistant says in its own words when the model could not answer; never model text."""

from __future__ import annotations

from collections.abc import Sequence

from tools import Proposal

__all__ = ["BROKEN", "FOREIGN", "MODEL_FAILED", "TIMEOUT", "TOO_MANY_STEPS", "apology", "empty"]

TIMEOUT = "Sorry, that took too long and I stopped. Please try again in a moment."
TOO_MANY_STEPS = (
    "Sorry, that needed more steps than I'm allowed in one go. Try asking for one thing at a time."
)
MODEL_FAILED = "Sorry, I couldn't reach my language model just now. Please try again in a moment."
BROKEN = "Sorry, something went wrong on my side and I couldn't answer. Please try again."
FOREIGN = (
    "This conversation belongs to another merchant's account, so I can't continue it here. "
    "Please start a new thread."
)


def apology(kind: str, proposals: Sequence[Proposal]) -> str:
    """The apology for a failed turn, plus any approval card it had already prepared.

    A card minted before the failure is real and is posted with this reply; saying nothing
    about it would leave the person wondering where it came from.
    """
    text = {
        "timeout": TIMEOUT,
        "limit": TOO_MANY_STEPS,
        "model_error": MODEL_FAILED,
    }.get(kind, BROKEN)
    return text + _cards(proposals, lead="\nI had already prepared")


def empty(proposals: Sequence[Proposal]) -> str:
    """For a model that answered with no words at all."""
    if proposals:
        return _cards(proposals, lead="I prepared")
    return "I have nothing more to add. Ask me for help to see what I can do."


def _cards(proposals: Sequence[Proposal], *, lead: str) -> str:
    if not proposals:
        return ""
    listed = "\n".join(f"• {proposal.summary}" for proposal in proposals)
    return (
        f"{lead} {_count(len(proposals))} for approval:\n{listed}\n"
        "Nothing has been done; it only happens if you press Approve."
    )


def _count(n: int) -> str:
    return "a card" if n == 1 else f"{n} cards"
