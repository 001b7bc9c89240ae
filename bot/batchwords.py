"""The words every surface puts on a batch card (several writes, one Approve); never renders them.

Plain text, shared by Slack and Teams like ``bot.wording``: the heading, the line under it,
each card's outcome, the buttons, the confirm dialog, the notification, the channel's line
and what the model is told. Each renderer adds its own markup and escaping.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from bot import wording

__all__ = [
    "REJECT_ALL",
    "approve_all",
    "audit_text",
    "card_text",
    "confirm_text",
    "confirm_title",
    "copy_text",
    "count_line",
    "decided_title",
    "intro",
    "item_result",
    "model_note",
    "settled_intro",
    "summary",
]

REJECT_ALL: Final = "Reject all"


def approve_all(count: int) -> str:
    return f"Approve all {count}"


def intro(count: int) -> str:
    """The line above a waiting batch's list: what one press does."""
    return (
        f"{count} changes, one approval. Each runs on its own and is checked again first; "
        "one that can no longer run fails alone."
    )


def confirm_title(count: int) -> str:
    return f"Approve all {count} changes?"


def confirm_text(summaries: Sequence[str]) -> str:
    """The confirm dialog's text (Slack allows 300 characters): what runs, briefly."""
    listed = "; ".join(s.rstrip(".") for s in summaries)
    return f"Each runs on its own as soon as you confirm, checked again first: {listed}."


def card_text(count: int, for_name: str) -> str:
    """The notification of a fresh batch card."""
    return f"{for_name}, please approve or reject {count} changes in one card."


def copy_text(count: int, asker: str) -> str:
    return f"{asker or 'Someone'} needs your approval for {count} changes."


# What a batch's one heading says once every card in it has settled the same way.
_SAME: Final = {
    "done": "Approved and done",
    "failed": "Approved, but none of it ran",
    "rejected": "Not approved",
    "withdrawn": "Withdrawn",
    "expired": "Expired",
    "superseded": "Replaced",
    "interrupted": "Interrupted",
    "outcome_unknown": "Outcome unknown",
}
_COUNTED: Final = {
    "done": "done",
    "failed": "failed",
    "rejected": "not approved",
    "withdrawn": "withdrawn",
    "expired": "expired",
    "superseded": "replaced",
    "interrupted": "interrupted",
    "outcome_unknown": "outcome unknown",
    "executing": "running",
    "pending": "waiting",
}


def count_line(statuses: Sequence[str]) -> str:
    """ "2 done, 1 failed" in a fixed order."""
    counted = Counter(statuses)
    return ", ".join(f"{counted[s]} {word}" for s, word in _COUNTED.items() if counted[s])


def decided_title(statuses: Sequence[str]) -> str:
    """The heading of a settled batch: one word when every card ended alike, else the counts."""
    kinds = set(statuses)
    if len(kinds) == 1:
        return _SAME.get(statuses[0], wording.TITLES.get(statuses[0], statuses[0]))
    if "executing" in kinds:
        return f"Approved, running: {count_line(statuses)}"
    if kinds <= {"done", "failed", "interrupted", "outcome_unknown"}:
        return f"Approved: {count_line(statuses)}"
    return f"Settled: {count_line(statuses)}"


def item_result(status: str, outcome: str | None) -> str | None:
    """What became of one card of the batch, in a few plain words; None while it waits."""
    if status == "pending":
        return None
    if status == "failed":
        said = (outcome or "no reason given").rstrip(". ")
        tail = "" if "nothing was changed" in said.lower() else " Nothing was changed."
        return f"Failed: {said}.{tail}"
    if status == "done":
        return "Done"
    if status == "executing":
        return "Running"
    word = _COUNTED.get(status, status)
    return f"{word[:1].upper()}{word[1:]}: nothing was changed"


def audit_text(by: str, titles: Sequence[tuple[str, str, str | None]]) -> str:
    """The channel's one line for a settled batch: who, the counts, then each card's outcome.

    ``titles``: each card's (status, summary, outcome).
    """
    statuses = [s for s, _, _ in titles]
    head = f"{decided_title(statuses)} ({by})" if by else decided_title(statuses)
    lines = [f"{head}: {len(titles)} changes in one card."]
    for status, summary, outcome in titles:
        result = item_result(status, outcome) or "Waiting"
        lines.append(f"• {summary.rstrip('.')} — {result}")
    return "\n".join(lines)


def model_note(by: str, notes: Sequence[tuple[str, str, str | None, str | None]]) -> str:
    """What the model is told about a batch: each card's note (``wording.conversation_note``).

    ``notes``: each card's (status, summary, reason, outcome).
    """
    return "\n".join(
        wording.conversation_note(status, summary, by, reason, outcome)
        for status, summary, reason, outcome in notes
    )


def settled_intro(count: int) -> str:
    """The line under a settled batch's heading (the heading already counts the outcomes)."""
    return f"{count} changes in one card."


def summary(count: int) -> str:
    """What a batch is, as a list of cards names it."""
    return f"{count} changes in one card, with one approval."
