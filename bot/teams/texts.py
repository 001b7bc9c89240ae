"""Every word a Teams user reads outside the card itself; never sends anything.

Messages go out as plain text (``textFormat: plain``), so data and model text in them is shown
as typed; the card's own words come from ``bot.cards.wording`` like Slack's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from bot.adapter import Step
from bot.cards import wording
from bot.cards.cardspec import clip
from bot.cards.wording import field_label
from tools import Scope, hides, marked

__all__ = [
    "CONSENT_ALLOW",
    "CONSENT_DENY",
    "EDIT_CANCEL",
    "EDIT_SUBMIT",
    "EDIT_TITLE",
    "GONE_HERE",
    "MESSAGE_CHARS",
    "THINKING",
    "audit_text",
    "batch_audit_text",
    "card_follows",
    "consent_allowed",
    "consent_asked",
    "consent_code",
    "consent_denied",
    "consent_push",
    "consent_too_late",
    "database_unreachable",
    "editing",
    "field_hint",
    "field_label",
    "message_database_unreachable",
    "model_failed",
    "new_tools",
    "not_connected",
    "not_linked",
    "not_your_card",
    "press_failed",
    "refused",
    "reply",
    "step",
    "stream_ended",
    "working_failed",
]

_TEXT = 4000  # a chat message: far below Teams' limit, and readable on a phone
MESSAGE_CHARS: Final = _TEXT


def not_connected() -> str:
    return (
        "This Microsoft Teams organisation is not connected to a merchant, so I can't show "
        "or change anything here. Ask your merchant's owner to connect it with the command: "
        'countersign connect teams <tenant-id> "<merchant>"'
    )


def not_linked() -> str:
    return (
        "I don't know who you are in Countersign yet, so I can't show or change anything. "
        "Ask your shop's owner to add your work email, or to link you with the command: "
        "countersign link teams <tenant-id> <your-aad-object-id> <email>"
    )


# Teams sends these as plain text (textFormat plain): backticks around a command were shown
# as typed, so a command stands alone at the end of its sentence instead.


def not_your_card(owner_name: str | None, waiting: tuple[str, ...] = ()) -> str:
    # Every other refusal here starts with ⛔; this one, the commonest, did not.
    if owner_name:
        return refused(wording.not_your_card(owner_name))
    return refused(wording.not_waiting_for_you(waiting))


def refused(message: str) -> str:
    return f"⛔ {message}"


def model_failed() -> str:
    return (
        "Sorry, I couldn't answer that just now. Nothing was changed; please try again in a moment."
    )


def database_unreachable() -> str:
    return (
        "I couldn't reach my database just now, so I couldn't handle that press. If the card "
        "still shows its buttons, nothing was changed: please press again in a minute."
    )


def message_database_unreachable() -> str:
    return (
        "I couldn't reach my database just now, so I couldn't read that message, and nothing "
        "was changed. Please send it again in a minute."
    )


def press_failed() -> str:
    return (
        "Something went wrong while handling that press, so it did not go through. "
        "The card shows where it stands; nothing else was changed."
    )


def working_failed() -> str:
    return "Something went wrong while handling that. Nothing new was changed; try again."


def audit_text(
    status: str, *, summary: str, by: str, reason: str | None, outcome: str | None
) -> str:
    """The record of a decision the conversation sees (plain text)."""
    who = by or "Someone"
    if status == "done":
        text = f"✅ {who} approved: {summary}"
    elif status == "failed":
        text = (
            f"❌ {who} approved, but it failed: {summary} — {outcome or ''}. Nothing was changed."
        )
    elif status == "rejected":
        why = f" Reason: {reason}" if reason else ""
        # The summary is a sentence with its own full stop: "…asked by Ravi Kumar.. Reason:".
        text = f"🚫 {who} rejected: {wording.sentence(summary)}{why}"
    elif status in ("interrupted", "outcome_unknown"):
        text = f"⚠ {summary} — {outcome or status}."
    else:
        text = f"{who}: {summary} ({status})"
    # As on the card: each character that does not show is marked, and the line says so.
    if hides((text,), lines=True):
        text = f"{marked(text, lines=True)} ({wording.MARKED})"
    return clip(text, _TEXT)


_TOOL_NAME = 100  # a server names its own tools: one name cannot fill the message
_NEWS = 2000  # the list of new tools in one message, whole names only, then how many more


def new_tools(merchant: str, source: str, tools: Mapping[str, Scope]) -> str:
    """The owner's message that a source lists tools they have not reviewed (plain text: the
    server's names are shown as typed)."""
    each = [
        f"{clip(tool, _TOOL_NAME)} (the server marks it "
        f"{'read-only' if said is Scope.READ else 'a write'})"
        for tool, said in sorted(tools.items())
    ]
    lead = f"The {source} MCP server of {merchant} lists tools you have not reviewed:"
    return clip(
        f"{wording.fitted(lead, each, _NEWS)} Until you review them, each is a write that runs "
        f"only when someone approves its card. Review them with the command: countersign mcp "
        f'review "{merchant}" {source} (or --read TOOL / --write TOOL to say which yourself).',
        _TEXT,
    )


def reply(text: str) -> str:
    """The assistant's answer, cut to a message's length."""
    return clip(text, _TEXT)


# The Edit form on a Teams card: its heading, buttons and fields.
EDIT_TITLE: Final = "Edit this change"
EDIT_SUBMIT: Final = "Make new card"
EDIT_CANCEL: Final = "Cancel"
GONE_HERE: Final = "This approval card is no longer available here."


def field_hint(name: str) -> str:
    """The placeholder of an edited argument's empty input."""
    if name == "amount":
        return "For example 200 or 1250.50; empty refunds all that is left"
    return ""


def editing() -> str:
    return (
        "Change what you need: a new card is made from live data, and this one is replaced. "
        "Nothing changes until someone approves the new card."
    )


# The mark before a decision's record, as a single card's line has it.
_MARKS: Final = {
    "done": "✅",
    "failed": "❌",
    "rejected": "🚫",
    "withdrawn": "↩",
    "interrupted": "⚠",
    "outcome_unknown": "⚠",
}


def batch_audit_text(text: str, mark: str | None) -> str:
    """The record of a settled batch the conversation sees (the core's plain words), marked
    as a single card's is (``several.batch_mark``)."""
    return clip(f"{_MARKS.get(mark or '', '🗂')} {text}", _TEXT)


# A streamed answer's informative updates (Teams shows them in the reply's bubble until its
# words start): the step the agent is on, from the tool it calls, never the model's words.
THINKING: Final = "Thinking…"
_PREPARING = "Preparing a card…"
_LOOKING = "Looking it up…"
_READING = {
    "list_requests": "Reading requests…",
    "get_request": "Reading the request…",
    "list_orders": "Reading orders…",
    "get_order": "Reading the order…",
    "list_branches": "Reading branches…",
    "get_branch": "Reading the branch…",
    "stock_levels": "Reading stock levels…",
    "sales_summary": "Adding up sales…",
}
_MCP_SEPARATOR = "__"  # an MCP server's tool is named "<server>__<tool>"


def step(step: Step) -> str:
    """The informative update for the tool being called: a card being prepared, or what is read."""
    if step.write:
        return _PREPARING
    if step.tool in _READING:
        return _READING[step.tool]
    server, separator, _ = step.tool.partition(_MCP_SEPARATOR)
    return f"Asking {server}…" if separator and server else _LOOKING


def card_follows() -> str:
    """Ends a streamed reply that had no words of its own: the card comes next, on its own."""
    return "Here is the card."


def stream_ended() -> str:
    """Ends a streamed reply whose turn had nothing to say."""
    return "Done."


CONSENT_ALLOW: Final = "Allow"
CONSENT_DENY: Final = "Deny"


def consent_push(client_name: str) -> str:
    return f"{client_name} asks to connect to Countersign as you"


def consent_asked(client_name: str, client_host: str, merchant: str) -> str:
    return (
        f"{client_name} ({client_host}) asks to connect to Countersign as you, for {merchant}. "
        f"If you allow it, it will be able to read {merchant}'s data, and ask for changes that "
        "wait for a countersignature like any card. It can never make a change by itself."
    )


def consent_code(code: str) -> str:
    return f"Allow only if the page you just used shows the code {code}."


def consent_allowed(client_name: str, code: str) -> str:
    return f"You allowed {client_name} to connect (code {code})."


def consent_denied(client_name: str, code: str) -> str:
    return f"You denied {client_name} (code {code}). It was not connected."


def consent_too_late() -> str:
    return (
        "This request to connect is no longer waiting (it was answered, or its 10 minutes "
        "ran out). Start again from the agent if you still want to connect it."
    )
