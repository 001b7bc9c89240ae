"""The words of a Slack card and of what became of it; never posts anything.

Its heading, buttons and dialogs, the lines under it, the notification and the channel's
audit line. The sentences are ``bot.cards.wording``'s, shared with Teams. A line holding data
(a name, a note, a reason, an outcome) is a ``bot.slack.rich`` line, which Slack shows as
typed; mrkdwn carries only our words, mentions and times, and the notification ``text``,
escaped by ``bot.slack.mrkdwn``.
"""

from __future__ import annotations

from datetime import datetime

from bot.cards import wording
from bot.cards.cardspec import clip
from bot.slack import rich
from bot.slack.mrkdwn import esc, esc_data, mention, when
from bot.slack.rich import Line
from tools import hides, marked

__all__ = [
    "APPROVE",
    "CONFIRM_DENY",
    "MARKED",
    "REASON_HINT",
    "REASON_LABEL",
    "REJECT",
    "REJECT_MODAL_TITLE",
    "TOO_LONG_HERE",
    "WITHDRAW",
    "audit_line",
    "audit_text",
    "batch_audit",
    "card_for",
    "card_text",
    "confirm_ok",
    "confirm_text",
    "confirm_title",
    "decided_line",
    "decided_text",
    "note",
    "notification",
    "outcome_line",
    "progress",
    "rejecting",
    "waiting_for",
    "withdraw_ok",
    "withdraw_text",
    "withdraw_title",
]

APPROVE = wording.APPROVE
REJECT = wording.REJECT
WITHDRAW = wording.WITHDRAW
CONFIRM_DENY = "Not yet"

REJECT_MODAL_TITLE = "Reject this change"
REASON_LABEL = wording.REASON_LABEL
REASON_HINT = wording.REASON_HINT
MARKED = wording.MARKED
TOO_LONG_HERE = wording.TOO_LONG_HERE


# -- cards -------------------------------------------------------------------------------


def card_text(summary: str, for_name: str) -> str:
    """The notification: a complete sentence, readable on a lock screen.

    ``text`` is mrkdwn, so Slack's three characters are escaped in it (Slack shows them as
    typed): without this, a branch renamed ``<!channel>`` pinged the whole channel through
    every card's notification text.
    """
    return clip(esc(wording.card_text(summary, for_name)), 3000)


def notification(text: str) -> str:
    """A notification the core worded (a card's, a private copy's push), escaped like the card."""
    return clip(esc(text), 3000)


def card_for(slack_user: str | None, expires_at: datetime | None) -> str:
    """The line under a waiting card: its expiry, and whom it is for when the heading cannot say."""
    if slack_user is None:
        return f"Expires {when(expires_at)}" if expires_at else ""
    who = f"For {mention(slack_user)}"
    return f"{who} · expires {when(expires_at)}" if expires_at else who


def progress(text: str) -> Line:
    """The approvals line of a card that needs two ("Approved by Arjun Mehta, 1 of 2; …")."""
    return rich.line(rich.emoji("ballot_box_with_check"), " ", text)


def waiting_for(names: tuple[str, ...], expires_at: datetime | None = None) -> Line:
    """Whom a card someone asked for is waiting for, and when it expires, in their own list."""
    said = rich.line(f"Waiting for {wording.who(names)}" if names else "Waiting for an approver")
    return rich.line(said, " · expires ", rich.at(expires_at)) if expires_at else said


def rejecting(summary: str) -> list[Line]:
    """What the reject modal says it is about, above its (optional) reason."""
    return [
        rich.line("You are rejecting this change:"),
        rich.bold(summary, limit=2000),
        rich.line("Nothing will be changed."),
    ]


def confirm_title() -> str:
    return "Approve this change?"


def confirm_text(summary: str, *, left: int = 1, waiting: tuple[str, ...] = ()) -> str:
    """The Approve dialog: what the press does (runs it, or records 1 of 2), whom the card
    waits for, then what it approves, cut between words if it must be."""
    return wording.fitted(wording.confirm_lead(left, waiting), [summary.rstrip(".")], 300)


def confirm_ok() -> str:
    return "Yes, approve"


def withdraw_title() -> str:
    # A card is withdrawn, not the request it is about: "Withdraw this request?" on a card
    # approving request 4 read as if request 4 itself would be taken back.
    return "Withdraw this card?"


def withdraw_text(summary: str) -> str:
    return clip(f"{summary} Nobody will be able to approve it, and nothing will be changed.", 300)


def withdraw_batch_text(count: int) -> str:
    return f"{count} changes: nobody will be able to approve them."


def withdraw_ok() -> str:
    return "Yes, withdraw"


# -- decisions ---------------------------------------------------------------------------


def decided_line(by: str, slack_user: str | None, at: datetime | None, *, verb: str) -> Line:
    """Who decided and when, naming them once: their mention when known, else their name."""
    who = rich.user(slack_user) if slack_user else rich.line(by or "someone")
    return rich.line(f"{verb} by ", who, *((" · ", rich.at(at)) if at else ()))


def outcome_line(label: str, text: str, at: datetime | None = None) -> Line:
    """The outcome, as typed (with the decision's time when it also says who decided)."""
    said = text.rstrip(". ") if at else text
    head = rich.bold(f"{label}: ") if label else []
    return rich.line(head, said, *((" · ", rich.at(at)) if at else ()))


def note(text: str) -> Line:
    """What a card that did not run left as it was ("Nothing was changed; request 6 is still
    pending."), as typed."""
    return rich.line(text)


def decided_text(status: str, summary: str, by: str, standing: str | None = None) -> str:
    """The notification text of a decided card: one sentence, escaped like ``card_text``.

    A card that did not run says so, and how things stand ("Not approved (Arjun Mehta): …
    Nothing was changed; request 2 is still pending.").
    """
    return clip(esc(wording.decided_text(status, summary, by, standing)), 3000)


_MARKS = {
    "done": ":white_check_mark:",
    "failed": ":x:",
    "rejected": ":no_entry_sign:",
    "withdrawn": ":leftwards_arrow_with_hook:",
    "interrupted": ":warning:",
    "outcome_unknown": ":warning:",
}


def _audit(
    status: str,
    *,
    summary: str,
    by: str,
    standing: str | None,
    reason: str | None,
    outcome: str | None,
) -> tuple[str, str, str]:
    """The record of a decision as its mark, its sentence and what follows it, with each
    character that does not show marked, as on the card, and a sentence saying so."""
    said = wording.decided_text(status, summary, by or "someone", standing)
    mark, after = _MARKS.get(status, ""), ""
    if status == "rejected" and reason:
        said, after = said.rstrip() + " ", f"Reason: {reason}"
    elif status in ("failed", "interrupted", "outcome_unknown") and outcome:
        said, after = said.rstrip(". ") + ". ", outcome
    if hides((said, after), lines=True):
        said, after = marked(said), marked(after, lines=True) + f" ({wording.MARKED})"
    return mark, said, after


def audit_text(
    status: str,
    *,
    summary: str,
    by: str,
    standing: str | None,
    reason: str | None,
    outcome: str | None,
) -> str:
    """The channel-visible record of a decision as its push text: mrkdwn, every value escaped.

    The sentence is the decided card's own (``wording.decided_text``), so the channel reads
    what the card says: who decided, by name (both, for a card that needed two), and for a
    card that did not run, that nothing was changed and how things stand. It never names the
    person a card was posted for as the decider: a card may be decided by someone it was
    routed to.
    """
    mark, said, after = _audit(
        status, summary=summary, by=by, standing=standing, reason=reason, outcome=outcome
    )
    text = esc_data(said + after)
    return clip(f"{mark} {text}" if mark else text, 3000)


def batch_audit(said: str, mark: str | None) -> tuple[str, Line]:
    """A settled batch's channel record (the core's words) as push text and as typed, marked
    as a single card's is (``several.batch_mark``)."""
    emoji = _MARKS.get(mark or "", "")
    text = clip(f"{emoji} {esc_data(said)}" if emoji else esc_data(said), 3000)
    shown = rich.line(rich.emoji(emoji.strip(":")), " ") if emoji else []
    return text, rich.line(shown, rich.words(said, limit=2900))


def audit_line(
    status: str,
    *,
    summary: str,
    by: str,
    standing: str | None,
    reason: str | None,
    outcome: str | None,
) -> Line:
    """The record of a decision as the channel reads it: ``audit_text``'s words, as typed."""
    mark, said, after = _audit(
        status, summary=summary, by=by, standing=standing, reason=reason, outcome=outcome
    )
    emoji = rich.line(rich.emoji(mark.strip(":")), " ") if mark else []
    return rich.line(emoji, rich.words(said + after, limit=2900))
