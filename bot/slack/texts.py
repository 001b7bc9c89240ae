"""Every word a Slack user reads, and the escaping of what goes around them; never posts anything.

Tone and escaping live here so they are the same everywhere. Any string that came from the
merchant's data, a person or the model goes through ``esc`` before it is placed in mrkdwn: a
branch named ``<!channel>`` must ping nobody, and ``&`` must not start an entity.
"""

from __future__ import annotations

from datetime import datetime

from bot import wording
from bot.cardspec import clip

__all__ = [
    "APPROVE",
    "CONFIRM_DENY",
    "HELP",
    "HOME_INTRO",
    "HOURGLASS",
    "REASON_HINT",
    "REASON_LABEL",
    "REJECT",
    "REJECT_MODAL_TITLE",
    "audit_text",
    "card_text",
    "clip",
    "database_unreachable",
    "decided_text",
    "esc",
    "model_failed",
    "not_connected",
    "not_linked",
    "not_your_card",
    "press_failed",
    "refused",
    "reply",
    "when",
]

HOURGLASS = "hourglass_flowing_sand"

APPROVE = wording.APPROVE
REJECT = wording.REJECT
CONFIRM_DENY = "Not yet"

REJECT_MODAL_TITLE = "Reject this card"
REASON_LABEL = wording.REASON_LABEL
REASON_HINT = wording.REASON_HINT

HELP = (
    "*Countersign* reads your shop's data and proposes changes; nothing changes until the "
    "person a card is for presses *Approve*.\n"
    "• Mention me in a channel, or message me directly: _pending requests_, "
    "_show request 3_, _approve request 3_, _branches_, _sales this week_.\n"
    "• `/countersign pending` lists the cards waiting for you.\n"
    "• `/countersign help` shows this message."
)

HOME_INTRO = (
    "*Countersign* answers questions about your shop and prepares changes for you to approve. "
    "Nothing changes until you press *Approve* on a card."
)


# &, < and > are Slack's own escapes. mrkdwn has no escape for its styling characters, so
# they become look-alikes that Slack does not read as markup: a note typed as "*URGENT*
# ~approved~" restyled the whole card before.
_INERT = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "*": "\u2217",  # ∗ asterisk operator
        "_": "\u02cd",  # ˍ modifier letter low macron
        "~": "\u223c",  # ∼ tilde operator
        "`": "\u02cb",  # ˋ modifier letter grave accent
    }
)


def esc(text: str) -> str:
    """Makes data inert in mrkdwn: ``&``, ``<``, ``>`` escaped, styling characters defused.

    A branch named ``<!channel>`` pings nobody, ``<https://x|Approve here>`` is no link and
    ``*bold*`` is not bold. Bare URLs are kept from linking by ``verbatim`` on the block's text.
    """
    return text.translate(_INERT)


def when(at: datetime) -> str:
    """A time every reader sees in their own time zone, with a UTC fallback for old clients."""
    fallback = f"{at:%Y-%m-%d %H:%M} UTC"
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


def mention(slack_user: str) -> str:
    return f"<@{slack_user}>"


# -- cards -------------------------------------------------------------------------------


def card_text(summary: str, for_name: str) -> str:
    """The notification: a complete sentence, readable on a lock screen.

    ``text`` is mrkdwn like the blocks, so it is escaped like them: without this, a branch
    renamed ``<!channel>`` pinged the whole channel through every card's notification text.
    """
    return clip(esc(wording.card_text(summary, for_name)), 3000)


def card_for(slack_user: str | None, expires_at: datetime | None) -> str:
    who = f"For {mention(slack_user)}" if slack_user else "For the person who asked"
    return f"{who} · expires {when(expires_at)}" if expires_at else who


def confirm_title() -> str:
    return "Approve this change?"


def confirm_text(summary: str) -> str:
    return clip(f"{summary} This runs as soon as you confirm.", 300)


def confirm_ok() -> str:
    return "Yes, approve"


# -- decisions ---------------------------------------------------------------------------


def decided_line(status: str, by: str, slack_user: str | None, at: datetime | None) -> str:
    if status == "expired":
        return wording.EXPIRED_NOTE
    who = esc(by) + (f" ({mention(slack_user)})" if slack_user else "")
    stamp = f" {when(at)}" if at else ""
    return f"{wording.decided_verb(status)} by {who}{stamp}."


def labelled(label: str, text: str) -> str:
    """A bold label and an escaped value: ``*Outcome:* done.``"""
    return f"*{esc(label)}:* {esc(text)}"


def decided_text(status: str, summary: str, by: str) -> str:
    """The notification text of a decided card: one sentence, escaped like ``card_text``."""
    return clip(esc(wording.decided_text(status, summary, by)), 3000)


def audit_text(
    status: str,
    *,
    summary: str,
    by: str,
    slack_user: str | None,
    reason: str | None,
    outcome: str | None,
) -> str:
    """The channel-visible record of a decision, in mrkdwn (every value escaped)."""
    who = mention(slack_user) if slack_user else esc(by)
    # Summaries are sentences; the full stop is put back once, so no line reads "Kumar.. Reason".
    body = esc(summary).rstrip(". ")
    said = esc(outcome or status).rstrip(". ")
    if status == "done":
        return f":white_check_mark: {who} approved: {body}."
    if status == "failed":
        return f":x: {who} approved, but it failed: {body}. {said}. Nothing was changed."
    if status == "rejected":
        why = f" Reason: {esc(reason)}" if reason else ""
        return f":no_entry_sign: {who} rejected: {body}.{why}"
    if status in ("interrupted", "outcome_unknown"):
        return f":warning: {body}: {said}."
    return f"{who}: {body} ({esc(status)})"


# -- refusals and status messages -------------------------------------------------------


def not_your_card(owner_slack_user: str | None) -> str:
    owner = mention(owner_slack_user) if owner_slack_user else "the person who asked for it"
    return wording.not_your_card(owner)


def refused(message: str) -> str:
    return f":no_entry: {esc(message)}"


def not_connected() -> str:
    return (
        "This workspace is not connected to a merchant, so I can't show or change anything "
        "here. Ask your merchant's owner to connect it "
        '(`countersign connect slack <team-id> "<merchant>"`).'
    )


def not_linked() -> str:
    return (
        "I don't know who you are in Countersign yet, so I can't show or change anything. "
        "Ask your shop's owner to add your work email, or to link you with "
        "`countersign link slack`."
    )


def database_unreachable() -> str:
    return (
        "I couldn't reach my database just now, so I couldn't handle that press. If the card "
        "still shows its buttons, nothing was changed: please press again in a minute."
    )


def model_failed() -> str:
    return (
        "Sorry, I couldn't answer that just now. Nothing was changed; please try again in a moment."
    )


def press_failed() -> str:
    return (
        "Something went wrong while handling that button, so it did not go through. "
        "The card shows where it stands; nothing else was changed."
    )


def reply(text: str) -> str:
    """The assistant's answer, escaped: the model's words must not ping or link anyone."""
    return esc(text)


def pending_none() -> str:
    return "No cards are waiting for you."


def pending_title(count: int) -> str:
    return f"*{count} card{'s' if count != 1 else ''} waiting for you*"


def pending_text(count: int) -> str:
    return f"{count} approval card{'s are' if count != 1 else ' is'} waiting for you."


def home_empty() -> str:
    return "Nothing is waiting for your approval."
