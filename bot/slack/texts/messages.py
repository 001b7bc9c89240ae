"""What Slack says around cards: help, refusals, failures, lists of cards, the audit channel.

Our own words are mrkdwn. An answer or a refusal holding data is a ``Said``: its push text
escaped for mrkdwn (``bot.slack.mrkdwn``), and the lines its reader sees as typed
(``bot.slack.rich``). Never posts anything.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.cards import wording
from bot.cards.cardspec import clip
from bot.slack import rich
from bot.slack.mrkdwn import esc, esc_data, mention
from bot.slack.rich import Line
from tools import Scope

__all__ = [
    "COMMAND",
    "HELP",
    "HOME_INTRO",
    "HOURGLASS",
    "Said",
    "audit_not_a_channel",
    "audit_not_allowed",
    "audit_set",
    "database_unreachable",
    "home_empty",
    "message_lost",
    "model_failed",
    "new_tools",
    "not_connected",
    "not_linked",
    "not_your_card",
    "others_more",
    "others_title",
    "pending_more",
    "pending_none",
    "pending_text",
    "pending_title",
    "press_failed",
    "refused",
    "reply",
]

HOURGLASS = "hourglass_flowing_sand"
COMMAND = "/countersign"
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


class Said(str):
    """A message's push text (mrkdwn, escaped) carrying the lines its reader sees as typed.

    The core hands a surface's words to the adapter as a string. An answer or a refusal holds
    data (ids, names, paths, notes) that mrkdwn cannot show as typed, so the Slack adapter
    posts ``lines`` as rich_text beside the text; the text alone once showed look-alikes.
    """

    lines: tuple[Line, ...] = ()
    # The model's answer: shown with the feedback buttons under it (never a card, a refusal).
    answer: bool = False


def _said(text: str, lines: list[Line]) -> Said:
    said = Said(text)
    said.lines = tuple(lines)
    return said


_CHUNK = 2900  # a rich_text block's lines stay under a section's 3,000 characters


def _chunks(text: str) -> list[Line]:
    """Long text cut (at line ends where it can) into pieces a block holds, each as typed."""
    rows = [r[i : i + _CHUNK] for r in text.split("\n") for i in range(0, max(len(r), 1), _CHUNK)]
    pieces, current = [], ""
    for row in rows:
        if current and len(current) + 1 + len(row) > _CHUNK:
            pieces.append(current)
            current = ""
        current = f"{current}\n{row}" if current else row
    pieces.append(current)
    return [rich.words(piece) for piece in pieces if piece]


# -- refusals and status messages -------------------------------------------------------


def not_your_card(owner_slack_user: str | None, waiting: tuple[str, ...] = ()) -> str:
    """The refusal of a press by someone a card is not issued to.

    A card issued to one person names them; one routed to several (or needing two approvers)
    names those it waits for. It never says the card "belongs to the person who asked for
    it" (for a routed card, the one person who may not approve it), nor sends the reader to
    the heading to find whom it waits for: it tells them.
    """
    if owner_slack_user:
        return wording.not_your_card(mention(owner_slack_user))
    return wording.not_waiting_for_you(waiting)


def refused(message: str) -> Said:
    """Why a press or a command was refused; the ids and names in it shown as typed.

    Its times are shown as on the card, in the reader's zone: "already approved by Meera Iyer
    at 2026-12-01 20:19 UTC" sat under a card that said "today at 8:19 PM".
    """
    line = rich.line(rich.emoji("no_entry"), " ", rich.words(message, limit=_CHUNK))
    return _said(f":no_entry: {esc_data(message)}", [line])


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


def message_database_unreachable() -> str:
    return (
        "I couldn't reach my database just now, so I couldn't read that message, and nothing "
        "was changed. Please send it again in a minute."
    )


def message_lost() -> str:
    return (
        "Sorry, I was restarted while I was answering that message, so I couldn't finish it. "
        "Nothing was approved or changed by it: please send it again."
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


_TOOL_NAME = 100  # a server names its own tools: one name cannot fill the notice
_NEWS = 2000  # the list of new tools in one notice, whole names only, then how many more


def new_tools(merchant: str, source: str, tools: Mapping[str, Scope]) -> Said:
    """The owner's notice that a source lists tools they have not reviewed, shown as typed:
    the names are the server's own (``<!channel>`` pings nobody, ``_x_`` slants nothing)."""
    each = [
        f"{clip(tool, _TOOL_NAME)} (the server marks it "
        f"{'read-only' if said is Scope.READ else 'a write'})"
        for tool, said in sorted(tools.items())
    ]
    lead = f"The {source} MCP server of {merchant} lists tools you have not reviewed:"
    sentence = (
        f"{wording.fitted(lead, each, _NEWS)} Until you review them, each is a write that "
        f'runs only when someone approves its card. Review them with: countersign mcp review "'
        f'{merchant}" {source} (or --read TOOL / --write TOOL to say which yourself).'
    )
    return _said(esc(sentence), _chunks(sentence))


def reply(text: str) -> Said:
    """The assistant's answer: shown as typed (the model's words ping, link and restyle
    nothing), its push text escaped; its UTC times in each reader's own time zone."""
    said = _said(esc_data(text), _chunks(text))
    said.answer = True
    return said


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
    theirs = f"{theirs} {'are' if others != 1 else 'is'} waiting for others."
    return f"{mine} {theirs}" if count else theirs


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
