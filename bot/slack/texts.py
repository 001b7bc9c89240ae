"""Every word a Slack user reads, and the escaping of what goes around them; never posts anything.

Tone and escaping live here so they are the same everywhere. Any string that came from the
merchant's data, a person or the model goes through ``esc`` before it is placed in mrkdwn: a
branch named ``<!channel>`` must ping nobody, and ``&`` must not start an entity.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from bot import wording
from bot.cardspec import clip

__all__ = [
    "APPROVE",
    "COMMAND",
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
    "esc_data",
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
COMMAND = "/countersign"

APPROVE = wording.APPROVE
REJECT = wording.REJECT
CONFIRM_DENY = "Not yet"

REJECT_MODAL_TITLE = "Reject this change"
REASON_LABEL = wording.REASON_LABEL
REASON_HINT = wording.REASON_HINT

HELP = (
    "*Countersign* reads your shop's data and proposes changes; nothing changes until the "
    "person a card is for presses *Approve*.\n"
    "• Mention me in a channel, or message me directly: _pending requests_, "
    "_show request 3_, _approve request 3_, _branches_, _sales this week_.\n"
    "• `/countersign pending` lists the cards waiting for you.\n"
    "• `/countersign audit here`, in a channel, records every decision there (owners and "
    "managers).\n"
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


# The times the engine and the offline model write into text: "2026-11-30 02:08 UTC",
# "2026-11-30T02:08+00:00", "30 Nov 2026, 02:08 UTC". Only ones that name UTC are read: a time
# without a zone could be anyone's.
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_STAMP = re.compile(
    r"(?P<iso>\d{4}-\d{2}-\d{2})[ T](?P<hm>\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(?: UTC|Z|\+00:00)"
    rf"|(?P<day>\d{{1,2}}) (?P<mon>{_MONTHS}) (?P<year>\d{{4}}), (?P<hm2>\d{{2}}:\d{{2}}) UTC"
)


def _as_when(found: re.Match[str]) -> str:
    if found["iso"]:
        text = f"{found['iso']} {found['hm']}"
        at = datetime.strptime(text, "%Y-%m-%d %H:%M")
    else:
        text = f"{found['day']} {found['mon']} {found['year']} {found['hm2']}"
        at = datetime.strptime(text, "%d %b %Y %H:%M")
    return when(at.replace(tzinfo=UTC))


def timed(text: str) -> str:
    """Escaped text with every UTC time in it shown in each reader's own time zone.

    A card once said "Created at: 2026-11-30T02:08+00:00" beside an expiry Slack showed in the
    reader's zone: two renderings of time on one card, one of them a machine's.
    """
    return _STAMP.sub(_as_when, text)


def esc_data(text: str) -> str:
    """Data made inert (``esc``), with its UTC times as Slack date tokens."""
    return timed(esc(text))


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
    """The line under a waiting card: its expiry, and whom it is for when the heading cannot say."""
    if slack_user is None:
        return f"Expires {when(expires_at)}" if expires_at else ""
    who = f"For {mention(slack_user)}"
    return f"{who} · expires {when(expires_at)}" if expires_at else who


def rejecting(summary: str) -> str:
    """What the reject modal says it is about, above its (optional) reason."""
    return f"You are rejecting this change:\n*{esc_data(summary)}*\nNothing will be changed."


def confirm_title() -> str:
    return "Approve this change?"


def confirm_text(summary: str) -> str:
    return clip(f"{summary} This runs as soon as you confirm.", 300)


def confirm_ok() -> str:
    return "Yes, approve"


# -- decisions ---------------------------------------------------------------------------


def decided_line(by: str, slack_user: str | None, at: datetime | None, *, verb: str) -> str:
    """Who decided and when, naming them once: their mention when known, else their name."""
    who = mention(slack_user) if slack_user else esc(by or "someone")
    return f"{verb} by {who}" + (f" · {when(at)}" if at else "")


def outcome_line(label: str, text: str, at: datetime | None = None) -> str:
    """The outcome (with the decision's time when it also says who decided), escaped."""
    said = f"*{esc(label)}:* {esc_data(text)}" if label else esc_data(text)
    return f"{said.rstrip('. ')} · {when(at)}" if at else said


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
    body = esc_data(summary).rstrip(". ")
    said = esc_data(outcome or status).rstrip(". ")
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
    """The assistant's answer, escaped (the model's words must not ping or link anyone), with
    its UTC times shown in each reader's own time zone."""
    return esc_data(text)


def pending_none() -> str:
    return "No cards are waiting for you."


def pending_title(count: int, *, first: int = 1, shown: int | None = None) -> str:
    """The list's heading; says which ones are shown when not all of them fit."""
    title = f"*{count} card{'s' if count != 1 else ''} waiting for you*"
    if shown is None or (first == 1 and shown >= count):
        return title
    last = first + shown - 1
    return f"{title} · {first}–{last} shown" if shown > 1 else f"{title} · card {first} shown"


def pending_more(hidden: int, *, next_from: int) -> str:
    """The note under a list that could not hold every card, and how to see the rest."""
    more = f"*{hidden} more* {'are' if hidden != 1 else 'is'} waiting for you."
    return f"{more} `{COMMAND} pending {next_from}` lists them from card {next_from} on."


def pending_text(count: int) -> str:
    return f"{count} approval card{'s are' if count != 1 else ' is'} waiting for you."


def audit_set(channel: str) -> str:
    return (
        f"Done: every decision in this workspace is now also recorded here, in <#{channel}>, "
        "including approvals and rejections made in a direct message. If I'm not a member of "
        "this channel yet, please invite me."
    )


def audit_not_a_channel() -> str:
    return (
        "A direct message can't be the audit channel. Type `/countersign audit here` in the "
        "channel that should keep the record of decisions. Nothing was changed."
    )


def audit_not_allowed() -> str:
    return "Only an owner or a manager can choose the audit channel. Nothing was changed."


def home_empty() -> str:
    return "Nothing is waiting for your approval."
