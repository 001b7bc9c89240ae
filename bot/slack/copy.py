"""Every word a Slack user reads, and the escaping of what goes around them; never posts anything.

Tone and escaping live here so they are the same everywhere. Any string that came from the
merchant's data, a person or the model goes through ``esc`` before it is placed in mrkdwn: a
branch named ``<!channel>`` must ping nobody, and ``&`` must not start an entity.
"""

from __future__ import annotations

from datetime import datetime

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
    "clip",
    "esc",
    "when",
]

HOURGLASS = "hourglass_flowing_sand"

APPROVE = "Approve"
REJECT = "Reject"
CONFIRM_DENY = "Not yet"

REJECT_MODAL_TITLE = "Reject this card"
REASON_LABEL = "Why? (optional)"
REASON_HINT = "The assistant and the channel will see this."

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


def esc(text: str) -> str:
    """Escapes the three characters Slack's mrkdwn treats as control: &, < and >."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    """Cuts text to ``limit`` characters, marking the cut, so a long value cannot break a payload."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def when(at: datetime) -> str:
    """A time every reader sees in their own time zone, with a UTC fallback for old clients."""
    fallback = f"{at:%Y-%m-%d %H:%M} UTC"
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


def plain_when(at: datetime) -> str:
    """A time for plain_text and notification text, where Slack renders no date tokens."""
    return f"{at:%Y-%m-%d %H:%M} UTC"


def mention(slack_user: str) -> str:
    return f"<@{slack_user}>"


# -- cards -------------------------------------------------------------------------------


def card_header() -> str:
    return "Approval needed"


def card_text(summary: str, for_name: str) -> str:
    """The notification: a complete sentence, readable on a lock screen."""
    return clip(f"{for_name}, please approve or reject: {summary}", 3000)


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

DECIDED_HEADERS = {
    "done": "Approved and done",
    "failed": "Approved, but it failed",
    "interrupted": "Interrupted",
    "outcome_unknown": "Outcome unknown",
    "rejected": "Rejected",
    "expired": "Expired",
    "executing": "Approved, running",
}


def decided_line(status: str, by: str, slack_user: str | None, at: datetime | None) -> str:
    who = esc(by) + (f" ({mention(slack_user)})" if slack_user else "")
    stamp = f" {when(at)}" if at else ""
    verbs = {"rejected": "Rejected", "expired": "Expired"}
    if status == "expired":
        return "Nobody approved this in time, so nothing was changed. Ask me again if it is still needed."
    return f"{verbs.get(status, 'Approved')} by {who}{stamp}."


def outcome_line(status: str, outcome: str | None, reason: str | None) -> str:
    if status == "done":
        return f"*Outcome:* done. {esc(outcome or '')}".strip()
    if status == "failed":
        return f"*Outcome:* failed — {esc(outcome or 'no reason given')}. Nothing was changed."
    if status == "rejected":
        return f"*Reason:* {esc(reason)}" if reason else "*Reason:* none given."
    if status in ("interrupted", "outcome_unknown"):
        return f"*Outcome:* {esc(outcome or status)}."
    return ""


def decided_text(status: str, summary: str, by: str) -> str:
    """The notification text of a decided card: one sentence."""
    if status == "expired":
        return clip(f"This card expired and nothing was changed: {summary}", 3000)
    head = DECIDED_HEADERS.get(status, status)
    return clip(f"{head} ({by}): {summary}", 3000)


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
    body = esc(summary)
    if status == "done":
        return f":white_check_mark: {who} approved: {body}"
    if status == "failed":
        return f":x: {who} approved, but it failed: {body} — {esc(outcome or '')}. Nothing was changed."
    if status == "rejected":
        why = f" Reason: {esc(reason)}" if reason else ""
        return f":no_entry_sign: {who} rejected: {body}.{why}"
    if status in ("interrupted", "outcome_unknown"):
        return f":warning: {body} — {esc(outcome or status)}."
    return f"{who}: {body} ({esc(status)})"


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


# -- refusals and status messages -------------------------------------------------------


def not_your_card(owner_slack_user: str | None) -> str:
    owner = mention(owner_slack_user) if owner_slack_user else "the person who asked for it"
    return f"This approval belongs to {owner}; only they can approve or reject it. Nothing was changed."


def refused(message: str) -> str:
    return f":no_entry: {esc(message)}"


def not_linked() -> str:
    return (
        "I don't know who you are in Countersign yet, so I can't show or change anything. "
        "Ask your shop's owner to add your work email, or to link you with "
        "`countersign link slack`."
    )


def model_failed() -> str:
    return (
        "Sorry, I couldn't answer that just now. Nothing was changed; please try again in a moment."
    )


def working_failed() -> str:
    return "Something went wrong while handling that button. Nothing new was changed; try again."


def pending_none() -> str:
    return "No cards are waiting for you."


def pending_title(count: int) -> str:
    return f"*{count} card{'s' if count != 1 else ''} waiting for you*"


def pending_text(count: int) -> str:
    return f"{count} approval card{'s are' if count != 1 else ' is'} waiting for you."


def home_empty() -> str:
    return "Nothing is waiting for your approval."
