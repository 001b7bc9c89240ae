"""Renders a card and the reject modal as Block Kit; never calls Slack.

A card is rendered from its neutral description (``bot.cards.cardspec.CardSpec``), so its words, values
and cuts are the ones every surface shows. Its data — the summary, each detail, the warning,
who decided, the outcome, a note — is ``rich_text`` (``bot.slack.rich``), which Slack shows as
typed, so what a person copies from a card is what runs; mrkdwn holds only our own words,
mentions and times. Everything here is a pure function from a card to a payload within Slack's
limits (header 150, section 3,000, a detail 2,000, 50 blocks, button value 2,000). Every block
gets a fresh ``block_id``: Slack keeps a client's stale state keyed by block id, and reusing one
across an update can leave the old buttons showing on a phone. Lists of cards (the App Home,
``/countersign pending``) are ``bot.slack.lists``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any, Final

from bot.cards import several
from bot.cards.cardspec import CardAction, CardSpec, Verb
from bot.slack import rich, texts
from bot.slack.rich import Line
from bot.slack.texts import clip

__all__ = [
    "APPROVE_ACTION",
    "APPROVE_VIEW",
    "DECIDING",
    "EVERY",
    "REJECT_ACTION",
    "REJECT_VIEW",
    "WITHDRAWING",
    "WITHDRAW_ACTION",
    "Block",
    "approve_modal",
    "approve_text",
    "body",
    "buttons",
    "card_id_of_block",
    "context",
    "divider",
    "head",
    "reject_modal",
    "render_decided",
    "render_pending",
    "rich_text",
    "section",
]

Block = dict[str, Any]

APPROVE_ACTION: Final = "card_approve"
REJECT_ACTION: Final = "card_reject"
WITHDRAW_ACTION: Final = "card_withdraw"
REJECT_VIEW: Final = "card_reject_modal"
APPROVE_VIEW: Final = "card_approve_modal"
EDIT_ACTION: Final = "card_edit"
EDIT_VIEW: Final = "card_edit_modal"
EDIT_INPUT: Final = "value"
REASON_BLOCK: Final = "reason"
REASON_INPUT: Final = "reason_input"

# Which of a card's actions a copy shows. The thread's card is seen by its asker and by those
# it is issued to, so it carries all three; a private copy goes only to someone it is issued
# to (never the asker), and a list shows each person only what they may press.
EVERY: Final = frozenset[Verb]({"approve", "edit", "reject", "withdraw"})
DECIDING: Final = frozenset[Verb]({"approve", "edit", "reject"})
WITHDRAWING: Final = frozenset[Verb]({"withdraw"})

_ACTION_IDS: Final[dict[Verb, str]] = {
    "approve": APPROVE_ACTION,
    "edit": EDIT_ACTION,
    "reject": REJECT_ACTION,
    "withdraw": WITHDRAW_ACTION,
}
_STYLES: Final[dict[Verb, str]] = {"approve": "primary", "reject": "danger"}

_MAX_BLOCKS, _MAX_LINES, _FIELD, _SECTION, _HEADER, _VALUE = 50, 10, 2000, 3000, 150, 2000


def _id(kind: str, card_id: str = "") -> str:
    return (
        f"{kind}-{card_id}-{uuid.uuid4().hex[:8]}" if card_id else f"{kind}-{uuid.uuid4().hex[:8]}"
    )


def card_id_of_block(block_id: str) -> str | None:
    """The card id an actions block was rendered for (``card-<id>-<nonce>``)."""
    parts = block_id.split("-")
    return parts[1] if len(parts) == 3 and parts[0] == "card" else None


def plain(text: str, limit: int, *, emoji: bool = True) -> dict[str, Any]:
    """Plain text, which Slack never parses; ``emoji`` False where it holds data, so a name
    holding ``:tada:`` is shown as typed, not as a picture."""
    return {"type": "plain_text", "text": clip(text, limit), "emoji": emoji}


def _mrkdwn(text: str, limit: int = _SECTION) -> dict[str, Any]:
    # verbatim: Slack would otherwise turn a URL or a #channel typed into a note into a link.
    return {"type": "mrkdwn", "text": clip(text, limit), "verbatim": True}


def section(text: str) -> Block:
    return {"type": "section", "block_id": _id("text"), "text": _mrkdwn(text)}


def context(text: str) -> Block:
    return {"type": "context", "block_id": _id("ctx"), "elements": [_mrkdwn(text)]}


def divider() -> Block:
    return {"type": "divider", "block_id": _id("div")}


def rich_text(lines: Sequence[Line], kind: str = "rich") -> Block:
    """Lines one under the other in a rich_text block: shown as typed, never parsed."""
    section = {"type": "rich_text_section", "elements": rich.joined(lines)}
    return {"type": "rich_text", "block_id": _id(kind), "elements": [section]}


def _details(details: Sequence[tuple[str, str]]) -> list[Block]:
    """Details as lines of a bold label and its value, as typed and whole: one short line each
    on a phone, ten to a block and no block past a section's 3,000 characters.

    Neither is cut nor read for times, mentions or links: they are what the tool will be sent
    (the engine refuses a card whose details could not fit, ``tools.cards.visible``). An argument
    "at 2026-05-01T10:15:59Z" was drawn as a date in the reader's zone, its "at" gone.
    """
    lines = [
        rich.line(rich.literal(f"{label}: ", strong=True), rich.value(v)) for label, v in details
    ]
    blocks: list[list[Line]] = []
    for each in lines:
        last = blocks[-1] if blocks else None
        size = sum(rich.length(one) + 1 for one in last) if last else 0
        if last is None or len(last) == _MAX_LINES or size + rich.length(each) > _SECTION:
            blocks.append([each])
        else:
            last.append(each)
    return [rich_text(group, "fields") for group in blocks]


def body(spec: CardSpec) -> list[Block]:
    """What the card is about: its summary, its details, its warning."""
    blocks = [rich_text([rich.bold(spec.summary, limit=_SECTION)], "text")]
    if spec.marked:
        blocks.append(rich_text([rich.line(rich.emoji("warning"), " ", texts.MARKED)], "marked"))
    blocks += _details(spec.details)
    if spec.warning:
        warning = rich.line(rich.emoji("warning"), " ", rich.words(spec.warning, limit=_FIELD))
        blocks.append(rich_text([warning], "warn"))
    return blocks


def _confirm(spec: CardSpec, verb: Verb, *, reader_approves: bool) -> dict[str, Any] | None:
    """The dialog before a press that cannot be undone: Approve runs the write (each of a card
    of several), Withdraw ends the card for everyone. Reject asks for its reason in a modal.

    Slack draws a button's dialog for whoever presses it, before anything is sent. Meera pressing
    Arjun's card got "Yes, approve", confirmed, and only then was refused; and Arjun read "Only
    Arjun Mehta can approve this; it runs as soon as they confirm" about himself. So Approve has
    a dialog only on a copy whose one reader may approve it (``reader_approves``), in words
    for them; on a channel's copy the press itself is answered: the confirm modal for whom it
    is issued to (``approve_modal``), the refusal for anyone else.
    """
    if verb == "approve" and not reader_approves:
        return None
    if verb == "approve" and spec.confirm is not None:
        words = (spec.confirm[0], approve_text(spec), texts.confirm_ok())
    elif verb == "approve":
        words = (texts.confirm_title(), approve_text(spec), texts.confirm_ok())
    elif verb == "withdraw" and spec.lines:
        words = (
            texts.withdraw_title(),
            texts.withdraw_batch_text(len(spec.lines)),
            texts.withdraw_ok(),
        )
    elif verb == "withdraw":
        words = (texts.withdraw_title(), texts.withdraw_text(spec.summary), texts.withdraw_ok())
    else:
        return None
    return dialog(*words)


def approve_text(spec: CardSpec) -> str:
    """What Approve does, said to someone it is issued to: it runs when they confirm (or counts
    as 1 of the approvals needed), then what it approves."""
    if spec.lines:
        live = [line.summary for line in spec.lines if line.result is None]
        return several.confirm_text(live, left=spec.approvals_left)
    return texts.confirm_text(spec.summary, left=spec.approvals_left)


def dialog(title: str, text: str, ok: str) -> dict[str, Any]:
    """The confirm dialog a button opens before its press is sent."""
    return {
        "title": plain(title, 100),
        "text": plain(text, 300, emoji=False),
        "confirm": plain(ok, 30),
        "deny": plain(texts.CONFIRM_DENY, 30),
    }


def _button(spec: CardSpec, action: CardAction, *, reader_approves: bool) -> dict[str, Any]:
    """One of a card's buttons, with its dialog if it has one."""
    confirm = _confirm(spec, action.verb, reader_approves=reader_approves)
    made: dict[str, Any] = {
        "type": "button",
        "action_id": _ACTION_IDS[action.verb],
        "text": plain(action.label, 75),
        "value": action.token,
    }
    if action.verb in _STYLES:
        made["style"] = _STYLES[action.verb]
    if confirm is not None:
        made["confirm"] = confirm
    return made


def buttons(
    spec: CardSpec, verbs: frozenset[Verb] = EVERY, *, reader_approves: bool = False
) -> list[Block]:
    """The card's actions among ``verbs``, in one actions block (none when nothing is left);
    Approve with its dialog only where ``reader_approves`` (see ``_confirm``)."""
    if len(spec.token) > _VALUE:
        raise ValueError(f"card {spec.card_id}: token longer than a button value may be")
    shown = [
        _button(spec, action, reader_approves=reader_approves)
        for action in spec.actions
        if action.verb in verbs
    ]
    if not shown:
        return []
    return [{"type": "actions", "block_id": _id("card", spec.card_id), "elements": shown}]


def _capped(top: list[Block], tail: list[Block]) -> list[Block]:
    """The card within Slack's 50 blocks, whole; one that cannot be keeps no buttons.

    An overlong card never loses detail rows from the middle while keeping its buttons, or
    Approve would send what nobody saw. The engine refuses such a card before it is made; one
    stored all the same is shown as far as it fits and cannot be approved here.
    """
    if len(top) + len(tail) <= _MAX_BLOCKS:
        return [*top, *tail]
    kept = [block for block in tail if block["type"] != "actions"]
    kept.append(context(texts.TOO_LONG_HERE))
    return [*top[: _MAX_BLOCKS - len(kept)], *kept]


def head(spec: CardSpec) -> Block:
    # The heading names people ("Approval needed from …"): data, shown as typed.
    return {
        "type": "header",
        "block_id": _id("head"),
        "text": plain(spec.title, _HEADER, emoji=False),
    }


def render_pending(
    spec: CardSpec,
    *,
    for_user: str | None,
    verbs: frozenset[Verb] = EVERY,
    reader_approves: bool = False,
) -> list[Block]:
    """A card waiting for a decision: whom it waits for (the header), summary, details,
    warning, its approvals so far, when it expires, the buttons among ``verbs``.

    ``for_user`` is named only when the header cannot say whom the card waits for.
    """
    mention = None if spec.waiting_for else for_user
    tail = [rich_text([texts.progress(spec.progress)], "ctx")] if spec.progress else []
    tail.append(context(texts.card_for(mention, spec.expires_at)))
    shown = buttons(spec, verbs, reader_approves=reader_approves)
    return _capped([head(spec), *body(spec)], [*tail, *shown])


def _decided_lines(spec: CardSpec, decided_by_slack: str | None) -> list[Line]:
    """Who decided and when, what came of it, and what was left as it was, each said once."""
    decided, outcome = spec.decided, spec.outcome
    lines = []
    if decided is not None and decided.in_outcome and outcome:
        lines.append(texts.outcome_line(*outcome, at=decided.at))
        outcome = None
    elif decided is not None:
        lines.append(
            texts.decided_line(decided.by, decided_by_slack, decided.at, verb=decided.verb)
        )
    if outcome:
        lines.append(texts.outcome_line(*outcome))
    if spec.note is not None:
        lines.append(texts.note(spec.note))
    return lines


def render_decided(spec: CardSpec, *, decided_by_slack: str | None) -> list[Block]:
    """A decided card: what it was, who decided and when, the outcome, what stays; no buttons.

    A note ("Nothing was changed; request 6 is still pending.") goes beside the who-and-when
    line, never instead of it, so a rejected card always says who rejected it.
    """
    lines = _decided_lines(spec, decided_by_slack)
    tail = [rich_text(lines, "ctx")] if lines else []
    return _capped([head(spec), *body(spec)], tail)


def approve_modal(spec: CardSpec, *, meta: dict[str, Any]) -> Block:
    """The confirm modal a press on a channel's copy opens for someone the card is issued to:
    the dialog its button would have drawn, in their words; ``meta`` (the token, the card and
    the message pressed) rides in ``private_metadata`` to make the press on submission."""
    # The dialog's own title ("Approve this change?", "Approve all 3 changes?") fits 24.
    title = spec.confirm[0] if spec.confirm is not None else texts.confirm_title()
    return {
        "type": "modal",
        "callback_id": APPROVE_VIEW,
        "private_metadata": json.dumps(meta),
        "title": plain(title, 24),
        "submit": plain(texts.confirm_ok(), 24),
        "close": plain(texts.CONFIRM_DENY, 24),
        "blocks": [rich_text([rich.words(approve_text(spec), limit=_SECTION)], "text")],
    }


def reject_modal(
    *,
    token: str,
    channel: str | None,
    thread_ts: str | None,
    summary: str,
    card_id: str = "",
    hint: str = texts.REASON_HINT,
) -> dict[str, Any]:
    """The modal asking why a card is rejected; the token and the card ride in
    ``private_metadata`` (the card id only to show the card afterwards, never to decide)."""
    meta = json.dumps(
        {"token": token, "card_id": card_id, "channel": channel, "thread_ts": thread_ts}
    )
    return {
        "type": "modal",
        "callback_id": REJECT_VIEW,
        "private_metadata": meta,
        "title": plain(texts.REJECT_MODAL_TITLE, 24),
        "submit": plain(texts.REJECT, 24),
        "close": plain(texts.CONFIRM_DENY, 24),
        "blocks": [
            rich_text(texts.rejecting(summary), "text"),
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "optional": True,
                "label": plain(texts.REASON_LABEL, 2000),
                "hint": plain(hint, 2000),
                "element": {
                    "type": "plain_text_input",
                    "action_id": REASON_INPUT,
                    "multiline": True,
                    "max_length": 500,
                },
            },
        ],
    }
