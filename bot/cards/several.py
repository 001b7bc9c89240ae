"""Describes a card of several writes (one Approve for them all) and its words; never renders one.

A card of several is one heading, one line per write (its own sentence, with ids and names, its
warning, and once decided its outcome), and one set of buttons for all of them: "Approve all
N" (with a confirm), Reject, Withdraw. It is a ``bot.cards.cardspec.CardSpec`` like any card, with
``lines``; its summary and details are what a list of cards (the App Home, ``/countersign
pending``) shows of it. The words here are plain text, shared by Slack and Teams like
``bot.cards.wording``: each renderer adds its own markup and escaping.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Final, NamedTuple

from bot.cards import wording
from bot.cards.cardspec import (
    LIMITS,
    CardAction,
    CardSpec,
    Decided,
    Line,
    approvals_left,
    clip,
    pending,
    role_phrase,
    visibly,
)
from tools import CardRecord, CardStatus, hides, marked, too_long

__all__ = [
    "approve_all",
    "audit_text",
    "batch_mark",
    "copy_text",
    "reject_all",
    "spec",
    "too_long_together",
    "unsaid",
]

# The summary a line carries: twenty lines of this fit a Slack message and a phone screen.
_LINE = 400

_MCP_SEPARATOR: Final = "__"  # a merchant's MCP tool is named "<server>__<tool>"


def approve_all(count: int) -> str:
    return "Approve both" if count == 2 else f"Approve all {count}"


def reject_all(count: int) -> str:
    """The Reject beside ``approve_all``, in the same words: "Reject all" beside "Approve both"
    read as if it ended more than the two."""
    return "Reject both" if count == 2 else f"Reject all {count}"


def intro(count: int) -> str:
    """The line above a waiting batch's list: what one press does.

    It said "3 changes, one approval." beside "Needs 2 approvals from different people.": the
    changes are decided together, by however many approvals the card needs.
    """
    return (
        f"{count} changes, decided together. Each runs on its own and is checked again first; "
        "one that can no longer run fails alone."
    )


def confirm_title(count: int) -> str:
    return "Approve both changes?" if count == 2 else f"Approve all {count} changes?"


def confirm_text(summaries: Sequence[str], *, left: int = 1, waiting: Sequence[str] = ()) -> str:
    """The confirm dialog's text (Slack allows 300 characters): what a press does, then what runs.

    The list is cut between summaries, never inside one ("…expense for Kor…" was cut
    mid-word), and says how many more there are.
    """
    lead = wording.confirm_lead(left, tuple(waiting), several=True)
    whole = [s.rstrip(".") for s in summaries]
    said = wording.fitted(lead, whole, _CONFIRM_LIMIT)
    if not said.endswith(" more."):
        return said
    # Three requests in full overflow 300 characters, and the dialog listed two "and 1 more".
    # The card above it shows each in full; the dialog names each by its head ("Approve
    # request 3"), whole where the head is all a summary has.
    return wording.fitted(lead, [s.partition(" — ")[0] for s in whole], _CONFIRM_LIMIT)


_CONFIRM_LIMIT = 300


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
    if status == "outcome_unknown":
        # Sent, and no answer came (or the process stopped while it was with the server):
        # "nothing was changed" would be a guess, and could have it sent a second time.
        said = (outcome or "check before trying again").rstrip(". ")
        said = said.removeprefix("outcome unknown: ")
        return f"Outcome unknown: {said}."
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
    said = "\n".join(lines)
    # As on the card: each character that does not show is marked, and the line says so.
    return f"{marked(said, lines=True)}\n{wording.MARKED}" if hides((said,), lines=True) else said


# Which status's mark a batch's channel line carries: the first of these any write ended in,
# so a batch with one failure never reads as all done. The channel line of a batch had no mark
# at all, where a single card's carries ✅ or ❌.
_MARK_ORDER: Final = ("outcome_unknown", "interrupted", "failed", "done", "rejected", "withdrawn")


def batch_mark(statuses: Sequence[str]) -> str | None:
    """The status whose mark stands for a settled batch on its channel line, or None."""
    return next((s for s in _MARK_ORDER if s in statuses), None)


def settled_intro(count: int) -> str:
    """The line under a settled batch's heading (the heading already counts the outcomes)."""
    return f"{count} changes in one card."


def summary(count: int) -> str:
    """What a batch is, as a list of cards names it."""
    return f"{count} changes in one card, with one approval."


def statuses(items: Sequence[CardRecord], now: datetime | None = None) -> list[str]:
    """Each write's status as shown: a waiting one past its time reads expired."""
    return [
        str(CardStatus.EXPIRED)
        if c.status is CardStatus.PENDING and now is not None and c.expires_at <= now
        else str(c.status)
        for c in items
    ]


class _Listed(NamedTuple):
    """What a list of cards shows of a card of several: a summary, a detail per write."""

    summary: str
    details: tuple[tuple[str, str], ...]
    warning: str | None


def _line(card: CardRecord, status: str) -> Line:
    sentence = clip(card.summary, _LINE)
    return Line(
        card_id=card.card_id,
        summary=sentence,
        warning=clip(card.warning, LIMITS.warning) if card.warning else None,
        status=status,
        result=item_result(status, card.outcome),
        details=unsaid(card.tool, sentence, card.details, card.args),
    )


def unsaid(
    tool: str, summary: str, details: Sequence[tuple[str, str]], args: Mapping[str, object]
) -> tuple[tuple[str, str], ...]:
    """The arguments a write will be sent that its sentence does not already say, whole: what
    a line of several shows under its sentence, so one Approve never sends a value nobody saw.

    An argument of our own tools whose value the code's sentence holds ("request 6") is left
    out: twenty lines of repeated ids would hide the one note that mattered. A merchant's MCP
    tool ("<server>__<tool>") shows every argument: its sentence holds the server's own title,
    which could name the same values in another role.
    """
    own = _MCP_SEPARATOR in tool
    labelled = dict(details)
    shown: list[tuple[str, str]] = []
    for name, value in args.items():
        if value is None:
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        if own:
            shown.append((name, labelled.get(name, text)))
        elif text not in summary:
            shown.append(next(((k, v) for k, v in details if v == text), (name, text)))
    return tuple(shown)


def too_long_together(writes: Sequence[CardRecord]) -> str | None:
    """Why these cards cannot be one card showing all they send, or None when they can: then
    each keeps a card of its own."""
    return too_long(
        (f"{n}. {label}", value)
        for n, card in enumerate(writes, 1)
        for label, value in unsaid(card.tool, clip(card.summary, _LINE), card.details, card.args)
    )


def spec(
    card_id: str,
    items: Sequence[CardRecord],
    *,
    expires_at: datetime,
    created_at: datetime,
    token: str = "",
    now: datetime | None = None,
) -> CardSpec:
    """The card as it stands: waiting (with buttons when given its token) while any write
    waits, else settled with each write's outcome."""
    shown = statuses(items, now)
    lines = tuple(_line(c, s) for c, s in zip(items, shown, strict=True))
    count = len(lines)
    warnings = [f"{n}. {line.warning}" for n, line in enumerate(lines, 1) if line.warning]
    listed = _Listed(
        summary(count),
        tuple((f"{n}.", line.summary) for n, line in enumerate(lines, 1)),
        clip(" ".join(warnings), LIMITS.warning) if warnings else None,
    )
    live = [c for c, s in zip(items, shown, strict=True) if s == CardStatus.PENDING]
    if live:
        return _pending(card_id, live[0], lines, listed, expires_at=expires_at, token=token)
    decider = _decider(items, created_at)
    title = decided_title(shown)
    made = CardSpec(
        card_id=card_id,
        status="decided",
        title=title,
        issued_to=None,
        expires_at=expires_at,
        notification=f"{title}: {count} changes in one card.",
        decided=Decided(
            wording.decided_verb(str(decider.status)),
            clip(decider.decided_by_name or "", LIMITS.name),
            decider.decided_at,
        )
        if decider is not None and decider.decided_by_name
        else None,
        reason=next((c.reason for c in items if c.reason), None),
        lines=lines,
        intro=settled_intro(count),
        summary=listed.summary,
        details=listed.details,
        warning=listed.warning,
    )
    return visibly(made)


def _pending(
    card_id: str,
    first: CardRecord,
    lines: tuple[Line, ...],
    listed: _Listed,
    *,
    expires_at: datetime,
    token: str,
) -> CardSpec:
    """A waiting card of several: whom it waits for and its approvals are its first waiting
    write's (a press decides them all); it has no Edit (each write is edited alone)."""
    count = len(lines)
    made = pending(
        card_id=card_id,
        summary=listed.summary,
        details=listed.details,
        warning=listed.warning,
        expires_at=expires_at,
        waiting_for=tuple(i.name for i in first.waiting_for),
        role=role_phrase(first),
        routed=first.routed,
        progress=wording.progress(
            tuple(a.name for a in first.approvals), first.approvals_needed, first.needed_role
        ),
        all_of=_all_of(first),
        approvals_left=approvals_left(first),
    )
    actions = (
        (
            CardAction("approve", approve_all(count), token),
            CardAction("reject", reject_all(count), token),
            CardAction("withdraw", wording.WITHDRAW, token),
        )
        if token
        else ()
    )
    return visibly(
        replace(
            made,
            notification=card_text(count, wording.who(made.waiting_for) or "You"),
            actions=actions,
            lines=lines,
            intro=intro(count),
            confirm=(
                confirm_title(count),
                confirm_text(
                    [line.summary for line in lines if line.result is None],
                    left=approvals_left(first),
                    waiting=made.waiting_for,
                ),
            ),
        )
    )


def _all_of(first: CardRecord) -> bool:
    left = first.approvals_needed - len(first.approvals)
    return left > 1 and left >= len([i for i in first.waiting_for if i.name])


def _decider(items: Sequence[CardRecord], created_at: datetime) -> CardRecord | None:
    """The write whose decision names who decided the card (a press decides them all)."""
    decided = [c for c in items if c.decided_by_name and c.decided_at]
    return max(decided, key=lambda c: c.decided_at or created_at, default=None)
