"""The words every surface puts on a card, as plain text; never formats, escapes or renders them.

A card reads the same in Slack and in Teams: the titles, the sentence for who decided, the
outcome and reason lines, the notification text. Each renderer adds its own markup (bold,
mentions, date tokens) and its own escaping around these words, never different words.
"""

from __future__ import annotations

from typing import Final, Literal

from tools import MARKED as _MARKED
from tools import PREVIEW

__all__ = [
    "APPROVE",
    "ASKED_BY_AGENT",
    "EDIT",
    "EXPIRED_NOTE",
    "MARKED",
    "MCP_AGENT_PREFIX",
    "PENDING_TITLE",
    "REASON_HINT",
    "REASON_LABEL",
    "REJECT",
    "TITLES",
    "TOO_LONG_HERE",
    "WITHDRAW",
    "SeenBy",
    "card_text",
    "conversation_note",
    "copy_text",
    "decided_details",
    "decided_text",
    "decided_verb",
    "edited_note",
    "expired_note",
    "field_label",
    "names_decider",
    "not_your_card",
    "outcome",
    "outside_agent",
    "pending_title",
    "progress",
    "proposed",
    "reason_hint",
    "sentence",
    "unchanged",
    "who",
    "who_and",
]

PENDING_TITLE: Final = "Approval needed"
# The line on a card, and under an audit line, holding characters that do not show (marked).
MARKED: Final = _MARKED
# Under a card stored before the engine refused cards too long to show whole, shown in part.
TOO_LONG_HERE: Final = (
    "This card is too long to show here in full, so it cannot be approved here; "
    "nothing was sent. Ask for the change again in smaller parts."
)
APPROVE: Final = "Approve"
REJECT: Final = "Reject"
EDIT: Final = "Edit"
WITHDRAW: Final = "Withdraw"
REASON_LABEL: Final = "Reason (optional)"
REASON_HINT: Final = (
    "Leave it empty to reject without one. The assistant and the channel will see it."
)
# Who reads a reason, wherever the card was asked: the thread's channel; a DM or 1:1 chat,
# where there is no channel ("the channel will see it" was said there too); an agent at /mcp,
# which is told the outcome (the "assistant" there is not Countersign's).
SeenBy = Literal["channel", "asker", "agent"]
_HINTS: Final[dict[SeenBy, str]] = {
    "channel": REASON_HINT,
    "asker": "Leave it empty to reject without one. The assistant and the person who asked "
    "will see it.",
    "agent": "Leave it empty to reject without one. The agent that asked for this card will "
    "be told it.",
}


def reason_hint(seen_by: SeenBy) -> str:
    """The reason field's hint: who will see the reason (``SeenBy``)."""
    return _HINTS[seen_by]


TITLES: Final = {
    "done": "Approved and done",
    "failed": "Approved, but it failed",
    "interrupted": "Interrupted",
    "outcome_unknown": "Outcome unknown",
    # What happened to the card, never to what it would have changed: "Rejected" over "Reject
    # request 6" read as if request 6 had been rejected, while it was still pending.
    "rejected": "Not approved",
    "expired": "Expired",
    "withdrawn": "Withdrawn",
    "superseded": "Replaced",
    "executing": "Approved, running",
}

EXPIRED_NOTE: Final = (
    "Nobody approved this in time, so nothing was changed. Ask me again if it is still needed."
)


def expired_note(standing: str | None) -> str:
    """An expired card's note; with what still stands, "nothing was changed" is said once:
    "Nobody approved this in time. Nothing was changed; request 2 is still pending. …"."""
    if not standing:
        return EXPIRED_NOTE
    return (
        f"Nobody approved this in time. {unchanged(standing)} Ask me again if it is still needed."
    )


def who(names: tuple[str, ...]) -> str:
    """People a card waits for, as one phrase: "Arjun Mehta", "Arjun Mehta or Meera Iyer"."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} or {names[-1]}"


def pending_title(
    waiting_for: tuple[str, ...],
    *,
    role: str | None = None,
    routed: bool = False,
    all_of: bool = False,
) -> str:
    """The heading of a waiting card, naming whom it waits for.

    The heading tells everyone first: in small grey text under the fields, Meera would see a
    green Approve on Arjun's card, confirm, and only then be refused. A
    card routed away from its asker says which role it waits for ("Waiting for a manager:
    Arjun Mehta or Meera Iyer"; "a manager or the owner" once escalated to the owner).
    """
    if not waiting_for:
        return PENDING_TITLE
    # Every one of them must still approve (two needed, two left): "and", not "or".
    names = who_and(waiting_for) if all_of else who(waiting_for)
    if routed and role:
        return f"Waiting for {_a(role)}: {names}"
    return f"{PENDING_TITLE} from {names}"


def _a(role: str) -> str:
    return f"an {role}" if role[:1] in "aeiou" else f"a {role}"


def progress(approved: tuple[str, ...], needed: int, role: str | None) -> str | None:
    """The line of a card that needs more than one approver; None when it needs one.

    "Needs 2 approvals from different people." before any, then "Approved by Arjun Mehta, 1 of
    2; waiting for a second manager."
    """
    if needed <= 1:
        return None
    if not approved:
        return f"Needs {needed} approvals from different people."
    second = f"a second {role}" if role else "a second approver"
    return f"Approved by {who_and(approved)}, {len(approved)} of {needed}; waiting for {second}."


def confirm_lead(left: int, waiting: tuple[str, ...], *, several: bool = False) -> str:
    """What the Approve dialog says a press does, before what it approves.

    Slack draws the dialog for whoever presses, before anything is sent, so every sentence in
    it must be true for every reader of the card. Meera, the first of two approvers, was told
    "This runs as soon as you confirm" and only 1 of 2 was recorded; and Meera pressing
    Arjun's card read "It runs as soon as you confirm", confirmed, and only then was refused.
    So the dialog first says whose card it is, then what an approval of theirs does.
    """
    this, runs = ("these", "each runs on its own") if several else ("this", "it runs")
    if not waiting and left > 1:
        # Said to an approver: their press is one of those needed, and runs nothing yet.
        return (
            f"Your approval counts as 1 of the {left} needed from different people; "
            "nothing runs until then."
        )
    if not waiting:
        return f"{runs.capitalize()} as soon as you confirm, checked again first."
    whose = f"Only {who(waiting)} can approve {this}"
    if left > 1:
        return (
            f"{whose}. Each approval counts as 1 of the {left} needed from different people; "
            "nothing runs until then."
        )
    them = "they confirm" if len(waiting) == 1 else "one of them confirms"
    return f"{whose}; {runs} as soon as {them}, checked again first."


def fitted(lead: str, items: list[str], limit: int) -> str:
    """``lead`` then as many of ``items`` as fit in ``limit`` characters, whole, and how many more."""
    shown: list[str] = []
    for n, item in enumerate(items):
        rest = len(items) - n - 1
        more = f"; and {rest} more" if rest else ""
        candidate = f"{lead} {'; '.join([*shown, item])}{more}."
        if len(candidate) > limit:
            hidden = len(items) - len(shown)
            return f"{lead} {'; '.join(shown)}; and {hidden} more." if shown else lead[:limit]
        shown.append(item)
    return f"{lead} {'; '.join(shown)}." if shown else lead


def who_and(names: tuple[str, ...]) -> str:
    """People who all did something: "Arjun Mehta and Meera Iyer"."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def proposed(value: str) -> str:
    """A before → after value of a card that did not run, said as what stays: "40 (52 was
    proposed)". A settled card must not show a change that never happened."""
    before, arrow, after = value.partition(" → ")
    return f"{before} ({after} was proposed)" if arrow else value


# A server's preview on a card that was approved: what the person agreed to, not what is now.
APPROVED_PREVIEW: Final = "Approved on this preview"
# Approved, whatever became of it since: a preview still on such a card is what was approved.
_APPROVED: Final = frozenset({"executing", "failed", "interrupted", "outcome_unknown"})


def decided_details(
    status: str, details: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """A decided card's details as true now: a done card's preview gives way to its result
    (it said "Would record …, nothing was recorded" above "Approved and done"); an approved
    card's preview is labelled as the one approved; a card never approved keeps it as it was."""
    if status == "done":
        return tuple((label, value) for label, value in details if label != PREVIEW)
    if status in _APPROVED:
        return tuple(
            (APPROVED_PREVIEW if label == PREVIEW else label, value) for label, value in details
        )
    return details


def decided_verb(status: str) -> str:
    """The verb of the who-decided line: what the person did to the card."""
    return _VERBS.get(status, "Approved")


_VERBS: Final = {"rejected": "Not approved", "withdrawn": "Withdrawn"}


REJECTED_BECAUSE: Final = "Why it was not approved"


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
    if status in ("withdrawn", "superseded"):
        return ("", result.strip()) if result and result.strip() else None
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


def copy_text(summary: str, asker: str) -> str:
    """The push notification of a card's private copy: what, and for whom."""
    return f"{asker or 'Someone'} needs your approval: {summary}"


def decided_text(status: str, summary: str, by: str, standing: str | None = None) -> str:
    """The notification text of a decided card (and the channel's line): one sentence.

    A card that did not run says so, and how things stand: "Not approved (Arjun Mehta):
    Approve request 2. Nothing was changed; request 2 is still pending."
    """
    if status == "expired":
        return f"This card expired and nothing was changed: {summary}"
    title = TITLES.get(status, status)
    line = f"{title} ({by}): {summary}" if by else f"{title}: {summary}"
    if status in _NOT_RUN:
        line = f"{line.rstrip('.')}. {unchanged(standing)}"
    return line


_NOT_RUN: Final = frozenset({"rejected", "withdrawn", "superseded", "expired"})


def unchanged(standing: str | None) -> str:
    """ "Nothing was changed; request 6 is still pending." (or without the second half)."""
    return f"Nothing was changed; {standing.rstrip('.')}." if standing else "Nothing was changed."


def not_waiting_for_you(waiting: tuple[str, ...]) -> str:
    """The refusal of a press on a routed card by someone it is not issued to, naming whom it waits for."""
    if not waiting:
        return "This card is not waiting for your approval. Nothing was changed."
    return (
        f"This card is waiting for {who(waiting)}, not for you, so only they can approve or "
        "reject it. Nothing was changed."
    )


def not_your_card(owner: str) -> str:
    """The refusal for a press by someone the card was not issued to; ``owner`` is already shown."""
    return f"This approval belongs to {owner}; only they can approve or reject it. Nothing was changed."


def sentence(text: str) -> str:
    """``text`` ended with one full stop: a summary that already has one keeps it alone."""
    said = text.rstrip()
    return said if said.endswith((".", "!", "?", "…")) else f"{said}."


def conversation_note(
    status: str, summary: str, by: str, reason: str | None, outcome: str | None
) -> str:
    """What the model is told happened to a card, so its next answer is true."""
    if status == "rejected":
        why = reason or "no reason given"
        return (
            f"{by} did not approve the card: {sentence(summary)} Reason: {sentence(why)} "
            "It was not done; "
            "do not propose it again unless asked."
        )
    template = _NOTES.get(status, "The card ended as {status}: {summary} {outcome}")
    said = template.format(status=status, summary=sentence(summary), by=by, outcome=outcome or "")
    return said.strip()


_NOTES: Final = {
    "done": "{by} approved the card and it was done: {summary} {outcome}",
    "failed": "{by} approved the card but it failed, nothing was changed: {summary} "
    "Reason: {outcome}",
    "expired": "The card expired without a decision, nothing was changed: {summary}",
    "withdrawn": "{by} withdrew the card, nothing was changed: {summary}",
    "superseded": "The card was replaced by a newer one, nothing was changed by it: {summary}",
    "pending": "{by} approved the card; it still needs another approver, nothing was done yet: "
    "{summary}",
}


def edited_note(by: str, outcome: str, summary: str) -> str:
    """What the model reads after a person edited a card: what changed, and that the new card
    still waits (the edit itself changed nothing in the shop)."""
    return (
        f"{by} edited the card before approving. {outcome}. The new card: {summary} "
        "It has NOT been done; it waits for approval on the new card."
    )


# What a person reads for each argument the tools let them edit, on every surface.
_FIELD_LABELS: Final = {
    "amount": "Refund amount",
    "reason": "Reason",
    "delta": "Units to add (negative to remove)",
    "price": "New price",
    "note": "Note",
}


def field_label(name: str) -> str:
    """The label of an argument a person may edit before approving."""
    return _FIELD_LABELS.get(name, name.replace("_", " ").capitalize())


# An agent elsewhere, through Countersign's MCP endpoint: "mcp/<token's name>/<client's name>".
MCP_AGENT_PREFIX = "mcp/"
ASKED_BY_AGENT = "Asked by an agent"


def outside_agent(agent: str) -> str | None:
    """Which agent asked, as the card's line says it ("Laptop (Claude Desktop)"); None for
    Countersign's own chat."""
    if not agent.startswith(MCP_AGENT_PREFIX):
        return None
    token, _, client = agent.removeprefix(MCP_AGENT_PREFIX).partition("/")
    return f"{token} ({client})" if client else token
