"""Every word a Slack user reads, escaped for mrkdwn; never posts anything.

Tone lives here so it is the same everywhere; the escaping is ``bot.slack.mrkdwn``'s, and every
string that came from the merchant's data, a person or the model goes through it before it is
placed in mrkdwn.
"""

from __future__ import annotations

from datetime import datetime

from bot import wording
from bot.cardspec import clip
from bot.slack.mrkdwn import esc, esc_data, mention, when

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
    "WITHDRAW",
    "audit_not_a_channel",
    "audit_not_allowed",
    "audit_set",
    "audit_text",
    "card_for",
    "card_text",
    "clip",
    "confirm_ok",
    "confirm_text",
    "confirm_title",
    "database_unreachable",
    "decided_line",
    "decided_text",
    "esc",
    "esc_data",
    "home_empty",
    "labelled",
    "model_failed",
    "not_connected",
    "not_linked",
    "not_your_card",
    "note",
    "notification",
    "others_more",
    "others_title",
    "outcome_line",
    "pending_more",
    "pending_none",
    "pending_text",
    "pending_title",
    "press_failed",
    "progress",
    "refused",
    "rejecting",
    "reply",
    "waiting_for",
    "when",
    "withdraw_ok",
    "withdraw_text",
    "withdraw_title",
]

HOURGLASS = "hourglass_flowing_sand"
COMMAND = "/countersign"

APPROVE = wording.APPROVE
REJECT = wording.REJECT
WITHDRAW = wording.WITHDRAW
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


# -- cards -------------------------------------------------------------------------------


def card_text(summary: str, for_name: str) -> str:
    """The notification: a complete sentence, readable on a lock screen.

    ``text`` is mrkdwn like the blocks, so it is escaped like them: without this, a branch
    renamed ``<!channel>`` pinged the whole channel through every card's notification text.
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


def progress(text: str) -> str:
    """The approvals line of a card that needs two ("Approved by Arjun Mehta, 1 of 2; …")."""
    return f":ballot_box_with_check: {esc(text)}"


def waiting_for(names: tuple[str, ...]) -> str:
    """Whom a card someone asked for is waiting for, in their own list of requests."""
    return f"Waiting for {esc(wording.who(names))}" if names else "Waiting for an approver"


def rejecting(summary: str) -> str:
    """What the reject modal says it is about, above its (optional) reason."""
    return f"You are rejecting this change:\n*{esc_data(summary)}*\nNothing will be changed."


def confirm_title() -> str:
    return "Approve this change?"


def confirm_text(summary: str) -> str:
    return clip(f"{summary} This runs as soon as you confirm.", 300)


def confirm_ok() -> str:
    return "Yes, approve"


def withdraw_title() -> str:
    return "Withdraw this request?"


def withdraw_text(summary: str) -> str:
    return clip(f"{summary} Nobody will be able to approve it, and nothing will be changed.", 300)


def withdraw_ok() -> str:
    return "Yes, withdraw"


# -- decisions ---------------------------------------------------------------------------


def decided_line(by: str, slack_user: str | None, at: datetime | None, *, verb: str) -> str:
    """Who decided and when, naming them once: their mention when known, else their name."""
    who = mention(slack_user) if slack_user else esc(by or "someone")
    return f"{verb} by {who}" + (f" · {when(at)}" if at else "")


def outcome_line(label: str, text: str, at: datetime | None = None) -> str:
    """The outcome (with the decision's time when it also says who decided), escaped."""
    said = f"*{esc(label)}:* {esc_data(text)}" if label else esc_data(text)
    return f"{said.rstrip('. ')} · {when(at)}" if at else said


def note(text: str) -> str:
    """What a card that did not run left as it was ("Nothing was changed; request 6 is still
    pending."), escaped."""
    return esc_data(text)


def labelled(label: str, text: str) -> str:
    """A bold label and an escaped value: ``*Outcome:* done.``"""
    return f"*{esc(label)}:* {esc(text)}"


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


def audit_text(
    status: str,
    *,
    summary: str,
    by: str,
    standing: str | None,
    reason: str | None,
    outcome: str | None,
) -> str:
    """The channel-visible record of a decision, in mrkdwn (every value escaped).

    The sentence is the decided card's own (``wording.decided_text``), so the channel reads
    what the card says: who decided, by name (both, for a card that needed two), and for a
    card that did not run, that nothing was changed and how things stand. It used to mention
    the person a card was posted for as the decider, which was wrong once a card could be
    decided by someone it was routed to.
    """
    line = esc_data(wording.decided_text(status, summary, by or "someone", standing))
    said = f"{_MARKS[status]} {line}" if status in _MARKS else line
    if status == "rejected" and reason:
        said = f"{said.rstrip()} Reason: {esc(reason)}"
    elif status in ("failed", "interrupted", "outcome_unknown") and outcome:
        said = f"{said.rstrip('. ')}. {esc_data(outcome)}"
    return clip(said, 3000)


# -- refusals and status messages -------------------------------------------------------


def not_your_card(owner_slack_user: str | None) -> str:
    """The refusal of a press by someone a card is not issued to.

    A card issued to one person names them; one routed to several (or needing two approvers)
    names nobody here, since its heading already says whom it waits for. It used to say the
    card "belongs to the person who asked for it", which for a routed card is the one person
    who may not approve it.
    """
    if owner_slack_user:
        return wording.not_your_card(mention(owner_slack_user))
    return (
        "This card is not waiting for your approval; its heading says whom it is waiting for. "
        "Nothing was changed."
    )


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


def _cards(count: int) -> str:
    return f"{count} card{'s' if count != 1 else ''}"


def pending_title(count: int, *, first: int = 1, shown: int | None = None) -> str:
    """The heading of the cards waiting for the reader's decision; says which ones are shown
    when not all of them fit."""
    title = f"*Waiting for you* · {_cards(count)}"
    if shown is None or (first == 1 and shown >= count):
        return title
    last = first + shown - 1
    return f"{title} · {first}–{last} shown" if shown > 1 else f"{title} · card {first} shown"


def pending_more(hidden: int, *, next_from: int) -> str:
    """The note under a list that could not hold every card, and how to see the rest."""
    more = f"*{hidden} more* {'are' if hidden != 1 else 'is'} waiting for you."
    return f"{more} `{COMMAND} pending {next_from}` lists them from card {next_from} on."


def others_title(count: int, *, shown: int | None = None) -> str:
    """The heading of the cards the reader asked for that wait on somebody else."""
    title = f"*Waiting for others* · {_cards(count)} you asked for"
    return title if shown is None or shown >= count else f"{title} · {shown} shown"


def others_more(hidden: int) -> str:
    """The note under the reader's own requests when not all of them fit."""
    return f"*{hidden} more* of your requests {'are' if hidden != 1 else 'is'} waiting for others."


def pending_text(count: int, others: int = 0) -> str:
    """The notification of ``/countersign pending``: how many wait for you, and for others."""
    mine = f"{count} approval card{'s are' if count != 1 else ' is'} waiting for you."
    if not others:
        return mine
    theirs = f"{others} card{'s' if others != 1 else ''} you asked for"
    return f"{mine} {theirs} {'are' if others != 1 else 'is'} waiting for others."


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
