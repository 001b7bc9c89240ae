"""Renders cards, the reject modal and the App Home as Block Kit; never calls Slack.

A card is rendered from its neutral description (``bot.cardspec.CardSpec``), so its words, values
and cuts are the ones every surface shows; Slack's mrkdwn escaping and markup are added here.
Everything here is a pure function from a card to a payload within Slack's limits (header 150,
section 3,000, field 2,000, ten fields a section, 50 blocks, button value 2,000). Every block
gets a fresh ``block_id``: Slack keeps a client's stale state keyed by block id, and reusing one
across an update can leave the old buttons showing on a phone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from bot.cardspec import CardSpec
from bot.cardspec import decided as decided_spec
from bot.cardspec import pending as pending_spec
from bot.slack import texts
from bot.slack.texts import clip, esc, esc_data
from tools import CardRecord, Proposal

__all__ = [
    "APPROVE_ACTION",
    "REJECT_ACTION",
    "REJECT_VIEW",
    "CardView",
    "card_id_of_block",
    "decided_blocks",
    "home_view",
    "pending_blocks",
    "reject_modal",
    "render_decided",
    "render_pending",
]

Block = dict[str, Any]

APPROVE_ACTION: Final = "card_approve"
REJECT_ACTION: Final = "card_reject"
REJECT_VIEW: Final = "card_reject_modal"
REASON_BLOCK: Final = "reason"
REASON_INPUT: Final = "reason_input"

_MAX_BLOCKS, _MAX_FIELDS, _FIELD, _SECTION, _HEADER, _VALUE = 50, 10, 2000, 3000, 150, 2000
_MAX_HOME = 100  # a Home tab view holds up to 100 blocks; a message, 50


@dataclass(frozen=True, slots=True)
class CardView:
    """What a card shows, whether fresh from a proposal or read back from the store."""

    card_id: str
    summary: str
    details: tuple[tuple[str, str], ...]
    warning: str | None
    expires_at: datetime | None
    token: str = ""
    waiting_for: tuple[str, ...] = ()

    @classmethod
    def of_proposal(cls, proposal: Proposal, *, waiting_for: tuple[str, ...] = ()) -> CardView:
        details = tuple((d.label, d.value) for d in proposal.details)
        return cls(
            proposal.card_id,
            proposal.summary,
            details,
            proposal.warning,
            proposal.expires_at,
            proposal.card,
            waiting_for,
        )

    @classmethod
    def of_record(cls, record: CardRecord, token: str = "") -> CardView:
        return cls(
            record.card_id, record.summary, record.details, record.warning, record.expires_at, token
        )

    def spec(self) -> CardSpec:
        """The neutral description this view renders (wording and limits shared with Teams)."""
        return pending_spec(
            card_id=self.card_id,
            summary=self.summary,
            details=self.details,
            warning=self.warning,
            expires_at=self.expires_at,
            token=self.token,
            waiting_for=self.waiting_for,
        )


def _id(kind: str, card_id: str = "") -> str:
    return (
        f"{kind}-{card_id}-{uuid.uuid4().hex[:8]}" if card_id else f"{kind}-{uuid.uuid4().hex[:8]}"
    )


def card_id_of_block(block_id: str) -> str | None:
    """The card id an actions block was rendered for (``card-<id>-<nonce>``)."""
    parts = block_id.split("-")
    return parts[1] if len(parts) == 3 and parts[0] == "card" else None


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": clip(text, limit), "emoji": True}


def _mrkdwn(text: str, limit: int = _SECTION) -> dict[str, Any]:
    # verbatim: Slack would otherwise turn a URL or a #channel typed into a note into a link.
    return {"type": "mrkdwn", "text": clip(text, limit), "verbatim": True}


def _section(text: str) -> Block:
    return {"type": "section", "block_id": _id("text"), "text": _mrkdwn(text)}


def _context(text: str) -> Block:
    return {"type": "context", "block_id": _id("ctx"), "elements": [_mrkdwn(text)]}


def _fields(details: Sequence[tuple[str, str]]) -> list[Block]:
    """Details as two-column fields: one short line each, readable on a phone."""
    fields = [_mrkdwn(f"*{esc(label)}*\n{esc_data(value)}", _FIELD) for label, value in details]
    return [
        {"type": "section", "block_id": _id("fields"), "fields": fields[i : i + _MAX_FIELDS]}
        for i in range(0, len(fields), _MAX_FIELDS)
    ]


def _body(spec: CardSpec) -> list[Block]:
    blocks = [_section(f"*{esc_data(spec.summary)}*"), *_fields(spec.details)]
    if spec.warning:
        blocks.append(_section(f":warning: {esc_data(spec.warning)}"))
    return blocks


def _buttons(spec: CardSpec) -> Block:
    if len(spec.token) > _VALUE:
        raise ValueError(f"card {spec.card_id}: token longer than a button value may be")
    confirm = {
        "title": _plain(texts.confirm_title(), 100),
        "text": _plain(texts.confirm_text(spec.summary), 300),
        "confirm": _plain(texts.confirm_ok(), 30),
        "deny": _plain(texts.CONFIRM_DENY, 30),
    }
    approve, reject = spec.actions
    return {
        "type": "actions",
        "block_id": _id("card", spec.card_id),
        "elements": [
            {
                "type": "button",
                "action_id": APPROVE_ACTION,
                "style": "primary",
                "text": _plain(approve.label, 75),
                "value": approve.token,
                "confirm": confirm,
            },
            {
                "type": "button",
                "action_id": REJECT_ACTION,
                "style": "danger",
                "text": _plain(reject.label, 75),
                "value": reject.token,
            },
        ],
    }


def _cap(blocks: list[Block]) -> list[Block]:
    # The buttons and the who-and-when line come last; an overlong card loses detail rows
    # from the middle, never its buttons.
    if len(blocks) <= _MAX_BLOCKS:
        return blocks
    return [*blocks[: _MAX_BLOCKS - 2], *blocks[-2:]]


def render_pending(spec: CardSpec, *, for_user: str | None) -> list[Block]:
    """A card waiting for a decision: whom it waits for (the header), summary, details,
    warning, when it expires, buttons. ``for_user`` is named only when the header cannot."""
    head = {"type": "header", "block_id": _id("head"), "text": _plain(spec.title, _HEADER)}
    mention = None if spec.waiting_for else for_user
    tail = [_context(texts.card_for(mention, spec.expires_at))]
    if spec.actions:
        tail.append(_buttons(spec))
    return _cap([head, *_body(spec), *tail])


def _decided_lines(spec: CardSpec, decided_by_slack: str | None) -> list[str]:
    """Who decided, when, and what came of it, each said once."""
    decided, outcome = spec.decided, spec.outcome
    if spec.note is not None:
        return [esc(spec.note), *([texts.outcome_line(*outcome)] if outcome else [])]
    if decided is not None and decided.in_outcome and outcome:
        return [texts.outcome_line(*outcome, at=decided.at)]
    lines = []
    if decided is not None:
        lines.append(
            texts.decided_line(decided.by, decided_by_slack, decided.at, verb=decided.verb)
        )
    if outcome:
        lines.append(texts.outcome_line(*outcome))
    return lines


def render_decided(spec: CardSpec, *, decided_by_slack: str | None) -> list[Block]:
    """A decided card: what it was, who decided and when, the outcome; no buttons."""
    head = {"type": "header", "block_id": _id("head"), "text": _plain(spec.title, _HEADER)}
    lines = _decided_lines(spec, decided_by_slack)
    return _cap([head, *_body(spec), _context("\n".join(lines))])


def pending_blocks(card: CardView, *, for_user: str | None) -> list[Block]:
    """A card waiting for a decision, as Block Kit (see ``render_pending``)."""
    return render_pending(card.spec(), for_user=for_user)


def decided_blocks(record: CardRecord, *, decided_by_slack: str | None) -> list[Block]:
    """A decided card as Block Kit (see ``render_decided``)."""
    return render_decided(decided_spec(record), decided_by_slack=decided_by_slack)


def reject_modal(
    *, token: str, channel: str | None, thread_ts: str | None, summary: str
) -> dict[str, Any]:
    """The modal asking why a card is rejected; the token rides in ``private_metadata``."""
    meta = json.dumps({"token": token, "channel": channel, "thread_ts": thread_ts})
    return {
        "type": "modal",
        "callback_id": REJECT_VIEW,
        "private_metadata": meta,
        "title": _plain(texts.REJECT_MODAL_TITLE, 24),
        "submit": _plain(texts.REJECT, 24),
        "close": _plain(texts.CONFIRM_DENY, 24),
        "blocks": [
            _section(texts.rejecting(summary)),
            {
                "type": "input",
                "block_id": REASON_BLOCK,
                "optional": True,
                "label": _plain(texts.REASON_LABEL, 2000),
                "hint": _plain(texts.REASON_HINT, 2000),
                "element": {
                    "type": "plain_text_input",
                    "action_id": REASON_INPUT,
                    "multiline": True,
                    "max_length": 500,
                },
            },
        ],
    }


def _entry(card: CardView, for_user: str | None) -> list[Block]:
    """One waiting card in a list: the whole card, never part of one."""
    spec = card.spec()
    blocks = [{"type": "divider", "block_id": _id("div")}, *_body(spec)]
    blocks.append(_context(texts.card_for(None, spec.expires_at)))
    if spec.actions:
        blocks.append(_buttons(spec))
    return blocks


def pending_list(
    cards: Sequence[CardView],
    *,
    for_user: str | None,
    start: int = 0,
    limit: int = _MAX_BLOCKS,
) -> list[Block]:
    """The person's waiting cards from the ``start``-th (0-based), whole cards only, within
    ``limit`` blocks, then how many more wait and how to see them (slash command, App Home).

    With nine cards waiting the list used to be cut at Slack's 50th block: the ninth card showed
    without its buttons or its expiry, and nothing said more were waiting.
    """
    if not cards:
        return [_section(texts.pending_none())]
    rest = list(cards[start:])
    blocks: list[Block] = []
    for i, card in enumerate(rest):
        entry = _entry(card, for_user)
        more = 1 if i < len(rest) - 1 else 0  # room for the "N more" note
        if 1 + len(blocks) + len(entry) + more > limit and blocks:
            break
        blocks += entry
    shown = sum(1 for b in blocks if b["type"] == "divider")
    title = _section(texts.pending_title(len(cards), first=start + 1, shown=shown))
    hidden = len(rest) - shown
    if hidden > 0:
        blocks.append(_section(texts.pending_more(hidden, next_from=start + shown + 1)))
    return [title, *blocks]


def home_view(
    cards: Sequence[CardView], *, for_user: str | None, linked: bool = True
) -> dict[str, Any]:
    """The App Home tab: a short introduction, then the person's waiting cards (whole ones)."""
    intro = [_section(texts.HOME_INTRO), {"type": "divider", "block_id": _id("div")}]
    if not linked:
        listed = [_section(texts.not_linked())]
    elif cards:
        listed = pending_list(cards, for_user=for_user, limit=_MAX_HOME - len(intro))
    else:
        listed = [_section(texts.home_empty())]
    return {"type": "home", "blocks": [*intro, *listed]}
