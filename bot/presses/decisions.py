"""Shows what the engine decided about a card: every copy updated, the audit line, the model told; never decides.

The same for every outcome and every surface: a press that approved, rejected or failed, a card
that expired, one the reconciler settled after a crash. Each copy of the card on the adapter's
platform is updated in place (no live buttons once decided), the channel it was asked in gets
the audit line (an expiry gets none: nobody decided anything), and the model is told in the
conversation the card came from, so its next answer is true (``bot.presses.drawing``).

The audit line also goes to the installation's audit channel when one is set (``/countersign
audit here``), so a decision made in a DM is not recorded only in that DM, where nobody else
can see it.

A card of several writes is shown the same way, as one card: its copies are the batch's, its
audit line is one line for all its writes, posted once it has settled. A decision is shown by
one process, the one that takes its showing (``tools.keeping.showing``; for a card of several, its
settled line's receipt), and is recorded shown only once its copies and its audit line went
out, and only for the copies stored at that moment (``tools.keeping.showing.record``): a copy recorded
meanwhile is drawn too before it is. A process that dies after the write committed, or Slack
failing the update, leaves the card unshown, never decided with live buttons for good, until a
press on it or the sweep redraws it. A copy recorded after the card was
decided is drawn by whoever records it (``show_recorded``).
"""

from __future__ import annotations

import contextlib

import structlog

from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import Placement
from bot.presses.answers import settle_answers
from bot.presses.drawing import covering, draw_copies, note, post_line, update_copies
from bot.runtime import receipts
from bot.services import Services
from tools import CardStatus

__all__ = ["redraw", "show", "show_recorded", "update_copies"]

log = structlog.get_logger("bot.presses.decisions")

# Nobody decided these: no line for the channel. A card still pending took an approval and
# waits for a second one; its copies show it, and the channel hears when it is decided.
_UNAUDITED = frozenset({CardStatus.EXPIRED, CardStatus.SUPERSEDED, CardStatus.PENDING})
# How many times a decision is drawn again while copies were recorded as it was shown.
_RECORDS = 4


async def show(services: Services, adapter: Adapter, card: Card) -> None:
    """Updates every copy on this surface, posts the audit line once and tells the model once.

    A decided card is shown by one process only, the one that takes its showing
    (``tools.keeping.showing``), and recorded shown once all of it went out; a card still waiting for
    a second approval has nothing to record.
    """
    if card.several:
        with contextlib.ExitStack() as running:
            # While it is shown here, no sweep of this process takes its items over.
            for item in card.items:
                running.enter_context(services.registry.showing.working_on(item.card_id))
            await _show_several(services, adapter, card)
        return
    if card.open:
        await _show(services, adapter, card)
        return
    if not await _take_and_show(services, adapter, card):
        log.info("decision_shown_elsewhere", card_id=card.card_id, status=str(card.lead.status))


async def show_recorded(services: Services, adapter: Adapter, card: Card) -> None:
    """Shows a card whose copy was just recorded, if it was decided meanwhile (``card`` as it
    stood once recorded): its whole showing when nobody answers for it, else its copies.

    Pressed on the message its turn had just posted, a decision found no copy to update; the
    turn then recorded the copy with live buttons, and nobody drew it again. Whoever else is
    showing it records it shown only with this copy drawn too (``tools.keeping.showing.record``).
    """
    if card.open:
        return
    if card.several:
        await show(services, adapter, card)
        return
    if not await _take_and_show(services, adapter, card):
        await update_copies(services, adapter, card)


async def _take_and_show(services: Services, adapter: Adapter, card: Card) -> bool:
    """Shows a decided card of one whole, if this process takes its showing; whether it did."""
    registry = services.registry
    if await registry.showing.take(card.card_id) is None:
        return False
    with registry.showing.working_on(card.card_id):
        await _shown(services, adapter, card)
    return True


async def redraw(services: Services, adapter: Adapter, card: Card) -> list[Placement] | None:
    """Shows a decision whose showing this process took (``tools.keeping.showing``) on this surface;
    the copies it went out on, or None when not all of it did. The caller records it shown.

    A card of several is shown as a press shows it: its line posted by whoever claims it
    first. A process killed between that claim and the line left it without one; its copies
    are still redrawn here (a second line would be worse than none).
    """
    with services.registry.showing.working_on(card.card_id):
        if card.several:
            return await _show_several(services, adapter, card, redrawing=True)
        copies, complete = await _show(services, adapter, card)
        return copies if complete else None


async def _shown(services: Services, adapter: Adapter, card: Card) -> None:
    """Shows a decision this process took the showing of, and records it shown; drawn again
    while a copy was recorded meanwhile (its line is not posted again)."""
    registry, told = services.registry, False
    for _ in range(_RECORDS):
        copies, told = await _show(services, adapter, card, told=told)
        if not copies:
            # Nowhere to show it yet: whoever records its copy takes the showing at once.
            await registry.showing.give_back(card.card_id)
            return
        covers = covering(copies, {adapter.platform})
        if not told or await registry.showing.record([card.card_id], batch_id=None, covers=covers):
            return
        log.info("copy_recorded_while_shown", card_id=card.card_id)
        card = await cards.load(registry, card.card_id) or card


async def _show(
    services: Services, adapter: Adapter, card: Card, *, told: bool = False
) -> tuple[list[Placement], bool]:
    """The copies, then the audit line, then the model; the copies, and whether they and the
    line went out (``told``: the line did already, on an earlier draw).

    The line waits while a copy could not be updated: the decision is shown again later, and
    posting it now would post it twice.
    """
    copies, updated = await draw_copies(services, adapter, card)
    # No copy yet: pressed while its turn was still recording where it was posted. Recorded
    # shown, it kept live buttons and no audit line for good (3 cards in soaks); unshown,
    # whoever records the copy shows it.
    out = bool(copies) and updated
    if card.open:
        # Waiting for a second approval: the model hears of it, the channel once it is decided.
        await note(services, card, copies)
    elif out and not told:
        told = await _line(services, adapter, card, copies)
        if told:
            await note(services, card, copies)
            await settle_answers(adapter, card, copies)
    log.info(
        "decision_shown",
        card_id=card.card_id,
        status=str(card.lead.status),
        copies=len(copies),
        complete=out and told,
    )
    return copies, out and told


async def _line(services: Services, adapter: Adapter, card: Card, copies: list[Placement]) -> bool:
    """The audit line of a card of one write, unless nobody decided anything or it went out
    already; whether it is out.

    "Out" is kept as a receipt once posted: drawn again because a process was killed before
    recording it shown, or because a copy was recorded meanwhile, it was posted again.
    """
    if all(c.status in _UNAUDITED for c in card.items):
        return True
    registry = services.registry
    if await receipts.taken(services.db, card.once("told")):
        return True
    if not await post_line(services, adapter, card, copies):
        return False
    await receipts.claim(services.db, card.once("told"), registry.now())
    return True


async def _show_several(
    services: Services, adapter: Adapter, card: Card, *, redrawing: bool = False
) -> list[Placement] | None:
    """A card of several as it stands now: every copy, then once it has settled the line;
    the copies it is all shown on, or None (``redrawing``: for the sweep, which records it).

    Two presses that each ran some of its writes both end here (and so may the sweep): only
    the first to claim its settled line posts it, across every process.
    """
    registry, told = services.registry, False
    for _ in range(_RECORDS):
        fresh = await cards.load(registry, card.card_id) or card
        if fresh.shown:
            log.info("decision_shown_elsewhere", card_id=card.card_id)
            return [p for p in fresh.placements if p.platform == adapter.platform]
        copies, updated = await draw_copies(services, adapter, fresh)
        settled = bool(copies) and not fresh.open
        # Its line does not wait for a copy that failed: the sweep redraws the copies.
        if settled and not told:
            told = await _several_line(services, adapter, fresh, copies, redrawing=redrawing)
        log.info("decision_shown", card_id=card.card_id, copies=len(copies), settled=settled)
        if not (settled and updated and told):
            return None
        items = [item.card_id for item in fresh.items]
        covers = covering(copies, {adapter.platform})
        if redrawing or await registry.showing.record(items, batch_id=card.card_id, covers=covers):
            return copies
        log.info("copy_recorded_while_shown", card_id=card.card_id)
    return None


async def _several_line(
    services: Services, adapter: Adapter, card: Card, copies: list[Placement], *, redrawing: bool
) -> bool:
    """Posts a settled card of several's line if this process claims it; whether the card is
    shown as far as this process goes: its line out, or (for the sweep) another's to post."""
    registry = services.registry
    if not await _claim_line(services, card, redrawing=redrawing):
        return redrawing or await receipts.taken(services.db, card.once("told"))
    audited = not all(c.status in _UNAUDITED for c in card.items)
    if audited and not await post_line(services, adapter, card, copies):
        return False
    await receipts.claim(services.db, card.once("told"), registry.now())
    await note(services, card, copies)
    await settle_answers(adapter, card, copies)
    return True


async def _claim_line(services: Services, card: Card, *, redrawing: bool) -> bool:
    """Whether this process posts the settled card's audit line: the first to claim it, or the
    sweep once, when whoever claimed it is gone without saying it went out.

    "Told" is claimed once the line is out, so the sweep posts it only then: a process killed
    between the claim and the line does not leave a batch with no line for good.
    """
    now = services.registry.now()
    if await receipts.claim(services.db, card.once("settled"), now):
        return True
    if not redrawing or await receipts.taken(services.db, card.once("told")):
        return False
    return await receipts.claim(services.db, card.once("retold"), now)
