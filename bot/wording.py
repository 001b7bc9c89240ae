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
    "names_decider",
    "not_your_card",
    "outcome",
    "pending_title",
    "who",
]

PENDING_TITLE: Final = "Approval needed"
APPROVE: Final = "Approve"
REJECT: Final = "Reject"
REASON_LABEL: Final = "Reason (optional)"
REASON_HINT: Final = (
    "Leave it empty to reject without one. The assistant and the channel will see it."
)

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


def who(names: tuple[str, ...]) -> str:
    """People a card waits for, as one phrase: "Arjun Mehta", "Arjun Mehta or Meera Iyer"."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} or {names[-1]}"


def pending_title(waiting_for: tuple[str, ...]) -> str:
    """The heading of a waiting card, naming whom it waits for.

    Who may press used to be small grey text under the fields: Meera saw a green Approve on
    Arjun's card, confirmed, and only then was refused. The heading tells everyone first.
    """
    return f"{PENDING_TITLE} from {who(waiting_for)}" if waiting_for else PENDING_TITLE


def decided_verb(status: str) -> str:
    """The verb of the who-decided line: a rejection says so, everything else was an approval."""
    return "Rejected" if status == "rejected" else "Approved"


def outcome(status: str, result: str | None, reason: str | None) -> tuple[str, str] | None:
    """The outcome or reason line as (label, text), or None when the status has none.

    The label is "" where the card's heading already says it ("Approved and done" needs no
    "Outcome: done." under it).
    """
    if status == "done":
        return ("", result.strip()) if result and result.strip() else None
    if status == "failed":
        # Refusals often end "…, so nothing was changed." already: say it once, with one stop.
        said = (result or "no reason given").rstrip(". ")
        tail = "" if "nothing was changed" in said.lower() else " Nothing was changed."
        return "Outcome", f"failed — {said}.{tail}"
    if status == "rejected":
        return "Reason", reason if reason else "none given."
    if status in ("interrupted", "outcome_unknown"):
        return "", f"{result or status}."
    return None


def names_decider(result: str | None, by: str) -> bool:
    """Whether an outcome already says who decided ("Request 1 was approved by Arjun Mehta.").

    Such a card said it twice: "Approved by Arjun Mehta (@Arjun Mehta)" and "Outcome: done.
    Request 1 was approved by Arjun Mehta". The outcome then stands for the who-decided line.
    """
    return bool(by and result and by in result)


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
