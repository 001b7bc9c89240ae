"""Shows what the engine decided about a card: every copy updated, the audit line, the model told; never decides.

The same for every outcome and every surface: a press that approved, rejected or failed, a card
that expired, one the reconciler settled after a crash. Each copy of the card on the adapter's
platform is updated in place (no live buttons once decided), the first copy's channel gets the
audit line (an expiry gets none: nobody decided anything), and the model is told in the
conversation the card came from, so its next answer is true.

The audit line also goes to the installation's audit channel when one is set (``/countersign
audit here``): a decision made in a DM used to be recorded only in that DM, where nobody else
could see it.

A card of several writes is shown the same way, as one card: its copies are the batch's, its
audit line is one line for all its writes, posted once it has settled. A decision is shown by
one process, the one that takes its showing (``tools.showing``; for a card of several, its
settled line's receipt), and is recorded shown only once its copies and its audit line went
out. A process that died after the
write committed, or Slack failing the update, used to leave a decided card with live buttons
for good; now the card stays unshown until a press on it or the sweep redraws it.
"""

from __future__ import annotations

import contextlib
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
from bot.runtime import receipts
from bot.surface import Surface
from tools import CardStatus, Connections

__all__ = ["audit_channel", "redraw", "show", "update_copies"]

log = structlog.get_logger("bot.presses.decisions")

# Nobody decided these: no line for the channel. A card still pending took an approval and
# waits for a second one; its copies show it, and the channel hears when it is decided.
_UNAUDITED = frozenset({CardStatus.EXPIRED, CardStatus.SUPERSEDED, CardStatus.PENDING})
# How many times an open card changed while drawn is drawn again, at most: each time
# someone decided something on it meanwhile, and a card has only so many approvals to take.
_REDRAWS = 4


async def show(surface: Surface, adapter: Adapter, card: Card) -> None:
    """Updates every copy on this surface, posts the audit line once and tells the model once.

    A decided card is shown by one process only, the one that takes its showing
    (``tools.showing``), and recorded shown once all of it went out; a card still waiting for
    a second approval has nothing to record.
    """
    if card.several:
        with contextlib.ExitStack() as running:
            # While it is shown here, no sweep of this process takes its items over.
            for item in card.items:
                running.enter_context(surface.registry.working_on(item.card_id))
            await _show_several(surface, adapter, card)
        return
    if card.open:
        await _show(surface, adapter, card)
        return
    registry = surface.registry
    if await registry.take_showing(card.card_id) is None:
        log.info("decision_shown_elsewhere", card_id=card.card_id, status=str(card.lead.status))
        return
    with registry.working_on(card.card_id):
        if await _show(surface, adapter, card):
            await registry.mark_shown(card.card_id)


async def redraw(surface: Surface, adapter: Adapter, card: Card) -> bool:
    """Shows a decision whose showing this process took (``tools.showing``) on this surface;
    whether all of it went out. The caller records it shown.

    A card of several is shown as a press shows it: its line posted by whoever claims it
    first. A process killed between that claim and the line left it without one; its copies
    are still redrawn here (a second line would be worse than none).
    """
    with surface.registry.working_on(card.card_id):
        if card.several:
            return await _show_several(surface, adapter, card, redrawing=True)
        return await _show(surface, adapter, card)


async def _show(surface: Surface, adapter: Adapter, card: Card) -> bool:
    """The copies, then the audit line, then the model; whether the copies and the line went out.

    The line waits while a copy could not be updated: the decision is shown again later, and
    posting it now would post it twice.
    """
    copies, updated = await _update_copies(surface, adapter, card)
    told = await _tell(surface, adapter, card, copies, updated=updated)
    # No copy yet: pressed while its turn was still recording where it was posted. Recorded
    # shown, it kept live buttons and no audit line for good (2 cards in a soak); unshown,
    # the sweep redraws it once the copy is known.
    complete = told and bool(copies)
    log.info(
        "decision_shown",
        card_id=card.card_id,
        status=str(card.lead.status),
        copies=len(copies),
        complete=complete,
    )
    return complete


async def _show_several(
    surface: Surface, adapter: Adapter, card: Card, *, redrawing: bool = False
) -> bool:
    """A card of several as it stands now: every copy, then once it has settled the line;
    whether it is all shown (``redrawing``: for the sweep, which records it shown).

    Two presses that each ran some of its writes both end here (and so may the sweep): only
    the first to claim its settled line posts it, across every process.
    """
    registry = surface.registry
    fresh = await cards.load(registry, card.card_id) or card
    if fresh.shown:
        log.info("decision_shown_elsewhere", card_id=card.card_id)
        return True
    copies, updated = await _update_copies(surface, adapter, fresh)
    settled = bool(copies) and not fresh.open
    claimed = settled and await _claim_line(surface, fresh, redrawing=redrawing)
    # Its line does not wait for a copy that failed: the sweep redraws the copies.
    told = claimed and await _tell(surface, adapter, fresh, copies, updated=True)
    if told:
        await receipts.claim(registry.db, fresh.once("told"), registry.now())
    if told and updated and not redrawing:
        for item in fresh.items:
            await registry.mark_shown(item.card_id)
    log.info("decision_shown", card_id=card.card_id, copies=len(copies), settled=settled)
    return settled and updated and (told or not claimed)


async def _claim_line(surface: Surface, card: Card, *, redrawing: bool) -> bool:
    """Whether this process posts the settled card's audit line: the first to claim it, or the
    sweep once, when whoever claimed it is gone without saying it went out.

    A process killed between the claim and the line left a batch with no line for good (a
    soak's last two); "told" is claimed once the line is out, so the sweep posts it only then.
    """
    registry, now = surface.registry, surface.registry.now()
    if await receipts.claim(registry.db, card.once("settled"), now):
        return True
    if not redrawing or await receipts.taken(registry.db, card.once("told")):
        return False
    return await receipts.claim(registry.db, card.once("retold"), now)


async def _tell(
    surface: Surface, adapter: Adapter, card: Card, copies: list[Placement], *, updated: bool
) -> bool:
    """The audit line (when someone decided something), then the model; whether the line went out."""
    told = updated
    if updated and copies and not all(c.status in _UNAUDITED for c in card.items):
        channel = await audit_channel(surface, copies[0])
        told = await adapter.post_audit(card, copies[0], audit_channel=channel)
    if told or card.open:
        by = next((c.decided_by_name for c in card.items if c.decided_by_name), None)
        by = by or " and ".join(a.name for a in card.lead.approvals) or "Someone"
        note = "\n".join(
            wording.conversation_note(str(c.status), c.summary, by, c.reason, c.outcome)
            for c in card.items
        )
        for conversation in dict.fromkeys(p.conversation for p in copies if p.conversation):
            await surface.assistant.record(conversation=conversation, text=note)
    return told


async def update_copies(surface: Surface, adapter: Adapter, card: Card) -> list[Placement]:
    """Shows the card as it stands on every copy on the adapter's surface; returns the copies."""
    copies, _ = await _update_copies(surface, adapter, card)
    return copies


async def _update_copies(
    surface: Surface, adapter: Adapter, card: Card
) -> tuple[list[Placement], bool]:
    """Every copy on the adapter's surface updated; the copies, and whether each is shown.
    Then every private list that showed the card is drawn again (``bot.presses.listed``).

    A card still open is read again once drawn, and drawn again while it changed meanwhile:
    Slack and Teams keep whichever update reaches them last, so a first of two approvals
    drawn late (its process descheduled mid-draw) put live buttons back on a card another
    process had already shown done (a soak's one finding). Whoever drew an old state sees
    the new one here; whoever changed it after this read draws after this draw.
    """
    registry = surface.registry
    fresh = await cards.load(registry, card.card_id)
    copies, updated = await _draw(surface, adapter, card, fresh)
    for _ in range(_REDRAWS):
        if not card.open:
            break  # a decision is final: every process draws it alike
        again = await cards.load(registry, card.card_id)
        if again is None or again.looks == card.looks:
            break
        log.info("card_changed_while_drawn", card_id=card.card_id, status=str(again.lead.status))
        card = fresh = again
        copies, updated = await _draw(surface, adapter, card, fresh)
    return copies, updated


async def _draw(
    surface: Surface, adapter: Adapter, card: Card, fresh: Card | None
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

        await cards.change_surface(surface.registry, card, swap)
        copies = [_moved(p, moved) for p in copies]
    await redraw_lists(surface, adapter, card, (fresh or card).lists)
    return copies, updated


def _moved(placement: Placement, moved: list[tuple[Placement, Placement]]) -> Placement:
    return next((anew for old, anew in moved if old == placement), placement)


async def audit_channel(surface: Surface, placement: Placement) -> str | None:
    """The audit channel set for the copy's installation (Slack workspaces have one), or None."""
    if not isinstance(placement, SlackPlacement) or not placement.team:
        return None
    found = await Connections(surface.registry.db).connection(placement.platform, placement.team)
    return found.audit_channel if found is not None else None
