"""Draws a card as it stands on every copy on one surface, posts its audit line, tells the model; never decides who shows it.

``bot.presses.decisions`` decides which process shows a decision and when it is recorded shown;
the steps it takes are here: every copy updated in place (and any private list that showed the
card), the audit line in the thread the card was asked in (and the installation's audit
channel, when one is set), the model told in each conversation the card came from.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import structlog

from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards import wording
from bot.cards.card import Card
from bot.placement import (
    Placement,
    SlackPlacement,
    lists_of_stored,
    placements_of_stored,
    stored,
)
from bot.presses.listed import redraw_lists
from bot.services import Services
from tools import Connections, Covers

__all__ = ["audit_channel", "covering", "draw_copies", "note", "post_line", "update_copies"]

log = structlog.get_logger("bot.presses.drawing")

# How many times an open card changed while drawn is drawn again, at most: each time
# someone decided something on it meanwhile, and a card has only so many approvals to take.
_REDRAWS = 4


def covering(copies: Sequence[Placement], platforms: Collection[str]) -> Covers:
    """Whether the copies stored on these platforms are all among ``copies``, and there is one.

    A decision shown on no copy was recorded shown before its turn recorded the one it was
    posted as; that copy kept live buttons and no audit line for good.
    """

    def covers(where: dict[str, Any] | None) -> bool:
        kept = [p for p in placements_of_stored(where) if p.platform in platforms]
        return bool(kept) and all(p in copies for p in kept)

    return covers


async def post_line(
    services: Services, adapter: Adapter, card: Card, copies: Sequence[Placement]
) -> bool:
    """Posts the audit line in the thread the card was asked in; whether it went out.

    That is the copy with the model's conversation (a private copy has none), else the first:
    a card asked for by an agent elsewhere has private copies only.
    """
    asked = next((p for p in copies if p.conversation), copies[0])
    channel = await audit_channel(services, asked)
    return await adapter.post_audit(card, asked, audit_channel=channel)


async def note(services: Services, card: Card, copies: Sequence[Placement]) -> None:
    """Tells the model, in each conversation the card came from, what became of it."""
    by = next((c.decided_by_name for c in card.items if c.decided_by_name), None)
    by = by or " and ".join(a.name for a in card.lead.approvals) or "Someone"
    said = "\n".join(
        wording.conversation_note(str(c.status), c.summary, by, c.reason, c.outcome)
        for c in card.items
    )
    for conversation in dict.fromkeys(p.conversation for p in copies if p.conversation):
        await services.assistant.record(conversation=conversation, text=said)


async def update_copies(services: Services, adapter: Adapter, card: Card) -> list[Placement]:
    """Shows the card as it stands on every copy on the adapter's surface; returns the copies."""
    copies, _ = await draw_copies(services, adapter, card)
    return copies


async def draw_copies(
    services: Services, adapter: Adapter, card: Card
) -> tuple[list[Placement], bool]:
    """Every copy on the adapter's surface updated; the copies, and whether each is shown.
    Then every private list that showed the card is drawn again (``bot.presses.listed``).

    A card still open is read again once drawn, and drawn again while it changed meanwhile:
    Slack and Teams keep whichever update reaches them last, so without this a first of two
    approvals drawn late (its process descheduled mid-draw) puts live buttons back on a card
    another process has already shown done. Whoever drew an old state sees the new one here;
    whoever changed it after this read draws after this draw.
    """
    registry = services.registry
    fresh = await cards.load(registry, card.card_id)
    copies, updated = await _draw(services, adapter, card, fresh)
    for _ in range(_REDRAWS):
        if not card.open:
            break  # a decision is final: every process draws it alike
        again = await cards.load(registry, card.card_id)
        if again is None or again.looks == card.looks:
            break
        log.info("card_changed_while_drawn", card_id=card.card_id, status=str(again.lead.status))
        card = fresh = again
        copies, updated = await _draw(services, adapter, card, fresh)
    return copies, updated


async def _draw(
    services: Services, adapter: Adapter, card: Card, fresh: Card | None
) -> tuple[list[Placement], bool]:
    """Draws ``card`` on each copy ``fresh`` (the card as read last) has on this surface.

    The copies are read afresh: the record a press decided was read before the write, and a
    private copy sent meanwhile (a turn still sending the approvers theirs) would otherwise
    keep live buttons on a decided card.
    """
    every = (fresh or card).placements
    copies = [p for p in every if p.platform == adapter.platform]
    moved: list[tuple[Placement, Placement]] = []
    updated = True
    for placement in copies:
        anew = await adapter.update(card, placement)
        if isinstance(anew, bool):
            updated = updated and anew
        else:
            moved.append((placement, anew))
    if moved:
        # A copy whose message was gone was posted anew: record where, so the audit line and
        # any later update reach it.
        def swap(where: dict[str, Any] | None) -> dict[str, Any]:
            kept = [_moved(p, moved) for p in placements_of_stored(where)]
            return stored(kept, lists_of_stored(where))

        await cards.change_posting(services.registry, card, swap)
        copies = [_moved(p, moved) for p in copies]
    await redraw_lists(services, adapter, card, (fresh or card).lists)
    return copies, updated


def _moved(placement: Placement, moved: list[tuple[Placement, Placement]]) -> Placement:
    return next((anew for old, anew in moved if old == placement), placement)


async def audit_channel(services: Services, placement: Placement) -> str | None:
    """The audit channel set for the copy's installation (Slack workspaces have one), or None."""
    if not isinstance(placement, SlackPlacement) or not placement.team:
        return None
    found = await Connections(services.db).connection(placement.platform, placement.team)
    return found.audit_channel if found is not None else None
