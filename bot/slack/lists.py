"""Renders a person's cards as Block Kit lists (the App Home, ``/countersign pending``); never calls Slack.

Two sections: the cards waiting for the person's decision, with Approve and Reject, and the
cards they asked for that wait on somebody else, saying whom, with Withdraw only. Each shows
whole cards within the payload's block limit, then how many more there are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

from bot.adapter import Listing
from bot.cards.card import Card
from bot.cards.cardspec import CardSpec
from bot.slack import texts
from bot.slack.blocks import (
    DECIDING,
    WITHDRAWING,
    Block,
    body,
    buttons,
    context,
    divider,
    rich_text,
    section,
)
from bot.slack.cards import render

__all__ = ["HOME_BLOCKS", "home_view", "listed_message", "pending_list", "spec_of"]

_MAX_BLOCKS: Final = 50
HOME_BLOCKS: Final = 100  # a Home tab view holds up to 100 blocks; a message, 50


def spec_of(card: Card, now: datetime) -> CardSpec:
    """The card as it stands, with the buttons its Slack copy was posted with."""
    placement = next((p for p in card.placements if p.platform == "slack"), None)
    return card.spec(token=placement.token if placement is not None else "", now=now)


def listed_message(listing: Listing) -> tuple[str, list[Block]]:
    """A ``/countersign pending`` list as ``listing`` stands: its text and its blocks, the card
    just decided first (without buttons)."""
    mine = [spec_of(card, listing.now) for card in listing.mine]
    asked = [spec_of(card, listing.now) for card in listing.asked]
    text = texts.pending_text(len(mine), len(asked)) if mine or asked else texts.pending_none()
    decided = listing.decided.spec(now=listing.now) if listing.decided is not None else None
    return text, pending_list(mine, asked, decided=decided)


def _approvals(spec: CardSpec) -> list[Block]:
    """The approvals line of a listed card needing two, as typed (it names who approved)."""
    return [rich_text([texts.progress(spec.progress)], "ctx")] if spec.progress else []


def _mine(spec: CardSpec) -> list[Block]:
    """A card waiting for the reader: the whole card, when it expires, Approve and Reject."""
    expiry = [context(texts.card_for(None, spec.expires_at))] if spec.expires_at else []
    return [
        divider(),
        *body(spec),
        *_approvals(spec),
        *expiry,
        *buttons(spec, DECIDING, reader_approves=True),
    ]


def _theirs(spec: CardSpec) -> list[Block]:
    """A card the reader asked for: whom it waits for (names, as typed), with Withdraw."""
    waiting = rich_text([texts.waiting_for(spec.waiting_for, spec.expires_at)], "ctx")
    return [divider(), *body(spec), *_approvals(spec), waiting, *buttons(spec, WITHDRAWING)]


def _whole(
    cards: Sequence[CardSpec], entry: Callable[[CardSpec], list[Block]], limit: int
) -> tuple[list[Block], int]:
    """As many whole cards as fit in ``limit`` blocks besides a heading and a "more" note
    (at least one), and how many that is."""
    blocks: list[Block] = []
    shown = 0
    for i, card in enumerate(cards):
        blocks_of = entry(card)
        more = 1 if i < len(cards) - 1 else 0
        if 1 + len(blocks) + len(blocks_of) + more > limit and blocks:
            break
        blocks += blocks_of
        shown += 1
    return blocks, shown


def _waiting_for_me(cards: Sequence[CardSpec], *, start: int, limit: int) -> list[Block]:
    """The cards waiting for the reader from the ``start``-th (0-based), then how many more.

    Cut by whole cards, never at Slack's 50th block: cut there, with nine cards waiting, the
    ninth shows without its buttons or its expiry, and nothing says more are waiting.
    """
    if not cards:
        return [section(texts.pending_none())]
    rest = list(cards[start:])
    blocks, shown = _whole(rest, _mine, limit)
    title = section(texts.pending_title(len(cards), first=start + 1, shown=shown))
    hidden = len(rest) - shown
    if hidden > 0:
        blocks.append(section(texts.pending_more(hidden, next_from=start + shown + 1)))
    return [title, *blocks]


def _waiting_for_others(cards: Sequence[CardSpec], *, limit: int) -> list[Block]:
    if not cards:
        return []
    blocks, shown = _whole(cards, _theirs, limit)
    title = section(texts.others_title(len(cards), shown=shown))
    if len(cards) > shown:
        blocks.append(section(texts.others_more(len(cards) - shown)))
    return [title, *blocks]


def pending_list(
    mine: Sequence[CardSpec],
    others: Sequence[CardSpec] = (),
    *,
    start: int = 0,
    limit: int = _MAX_BLOCKS,
    decided: CardSpec | None = None,
) -> list[Block]:
    """The reader's cards within ``limit`` blocks: ``decided`` (a card just decided, as it
    now stands), then those waiting for them from the ``start``-th (0-based) on, then (on the
    first page) those they asked for that wait on others. Each section holds whole cards; the
    second gets at most half when both have some.
    """
    if decided is not None:
        first = [*render(decided, for_user=None), divider()]
        return [*first, *pending_list(mine, others, start=start, limit=limit - len(first))]
    if not mine and not others:
        return [section(texts.pending_none())]
    theirs: list[Block] = []
    if start == 0:
        theirs = _waiting_for_others(others, limit=limit // 2 if mine else limit - 1)
    return [*_waiting_for_me(mine, start=start, limit=limit - len(theirs)), *theirs]


def home_view(
    mine: Sequence[CardSpec],
    others: Sequence[CardSpec] = (),
    *,
    linked: bool = True,
    decided: CardSpec | None = None,
) -> dict[str, Any]:
    """The App Home tab: a short introduction, the card its reader just decided here (if
    any), then the reader's cards (whole ones).

    Approving from the Home tab made the card vanish with no outcome shown: the card just
    decided stays at the top, as it now stands, until the tab is drawn again.
    """
    intro = [section(texts.HOME_INTRO), divider()]
    if decided is not None:
        intro += [*render(decided, for_user=None), divider()]
    if not linked:
        listed = [section(texts.not_linked())]
    elif mine or others:
        listed = pending_list(mine, others, limit=HOME_BLOCKS - len(intro))
    else:
        listed = [section(texts.home_empty())]
    return {"type": "home", "blocks": [*intro, *listed]}
