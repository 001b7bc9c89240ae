"""The words every surface puts on a card, as plain text; never formats, escapes or renders them.

A card reads the same in Slack and in Teams: the titles, the sentence for who decided, the
outcome and reason lines, the notification text. Each renderer adds its own markup (bold,
mentions, date tokens) and its own escaping around these words, never different words.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "APPROVE",
    "EXPIRED_NOTE",
    "PENDING_TITLE",
    "REASON_HINT",
    "REASON_LABEL",
    "REJECT",
    "TITLES",
    "card_text",
    "conversation_note",
    "decided_text",
    "decided_verb",
    "not_your_card",
    "outcome",
]

PENDING_TITLE: Final = "Approval needed"
APPROVE: Final = "Approve"
REJECT: Final = "Reject"
REASON_LABEL: Final = "Why? (optional)"
REASON_HINT: Final = "The assistant and the channel will see this."

TITLES: Final = {
    "done": "Approved and done",
    "failed": "Approved, but it failed",
    "interrupted": "Interrupted",
    "outcome_unknown": "Outcome unknown",
    "rejected": "Rejected",
    "expired": "Expired",
    "executing": "Approved, running",
}

EXPIRED_NOTE: Final = (
    "Nobody approved this in time, so nothing was changed. Ask me again if it is still needed."
)


def decided_verb(status: str) -> str:
    """The verb of the who-decided line: a rejection says so, everything else was an approval."""
    return "Rejected" if status == "rejected" else "Approved"


def outcome(status: str, result: str | None, reason: str | None) -> tuple[str, str] | None:
    """The outcome or reason line as (label, text), or None when the status has none."""
    if status == "done":
        return "Outcome", f"done. {result or ''}".strip()
    if status == "failed":
        # Refusals often end "…, so nothing was changed." already: say it once, with one stop.
        said = (result or "no reason given").rstrip(". ")
        tail = "" if "nothing was changed" in said.lower() else " Nothing was changed."
        return "Outcome", f"failed — {said}.{tail}"
    if status == "rejected":
        return "Reason", reason if reason else "none given."
    if status in ("interrupted", "outcome_unknown"):
        return "Outcome", f"{result or status}."
    return None


def card_text(summary: str, for_name: str) -> str:
    """The notification of a fresh card: a complete sentence, readable on a lock screen."""
    return f"{for_name}, please approve or reject: {summary}"


def decided_text(status: str, summary: str, by: str) -> str:
    """The notification text of a decided card: one sentence."""
    if status == "expired":
        return f"This card expired and nothing was changed: {summary}"
    return f"{TITLES.get(status, status)} ({by}): {summary}"


def not_your_card(owner: str) -> str:
    """The refusal for a press by someone the card was not issued to; ``owner`` is already shown."""
    return f"This approval belongs to {owner}; only they can approve or reject it. Nothing was changed."


def conversation_note(
    status: str, summary: str, by: str, reason: str | None, outcome: str | None
) -> str:
    """What the model is told happened to a card, so its next answer is true."""
    if status == "done":
        return f"{by} approved the card and it was done: {summary}. {outcome or ''}".strip()
    if status == "failed":
        return f"{by} approved the card but it failed, nothing was changed: {summary}. Reason: {outcome}"
    if status == "rejected":
        why = reason or "no reason given"
        return (
            f"{by} rejected the card: {summary}. Reason: {why}. It was not done; "
            "do not propose it again unless asked."
        )
    if status == "expired":
        return f"The card expired without a decision, nothing was changed: {summary}."
    return f"The card ended as {status}: {summary}. {outcome or ''}".strip()
