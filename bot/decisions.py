"""Shows what the engine decided about a card: every copy updated, the audit line, the model told; never decides.

The same for every outcome and every surface: a press that approved, rejected or failed, a card
that expired, one the reconciler settled after a crash. Each copy of the card on the adapter's
platform is updated in place (no live buttons once decided), the first copy's channel gets the
audit line (an expiry gets none: nobody decided anything), and the model is told in the
conversation the card came from, so its next answer is true.

The audit line also goes to the installation's audit channel when one is set (``/countersign
audit here``): a decision made in a DM used to be recorded only in that DM, where nobody else
could see it.

A decision is shown by one process, the one that takes its showing (``tools.showing``), and is
recorded shown only once its copies and its audit line went out. A process that died after the
write committed, or Slack failing the update, used to leave a decided card with live buttons
for good; now the card stays unshown until a press on it or the sweep redraws it.
"""

from __future__ import annotations

from typing import Any

import structlog

from bot import wording
from bot.adapter import Adapter
from bot.batch_show import show_batch
from bot.placement import (
    Placement,
    SlackPlacement,
    placements_of,
    placements_of_stored,
    stored,
)
from bot.surface import Surface
from tools import CardRecord, CardStatus, showing
from tools.card_store import DECIDED
from tools.connections import Connections

__all__ = ["audit_channel", "redraw", "show_decision", "update_copies"]

log = structlog.get_logger("bot.decisions")


async def show_decision(surface: Surface, adapter: Adapter, record: CardRecord) -> None:
    """Updates every copy on this surface, posts the audit line once and tells the model once.

    A card shown in a batch is shown as its batch (the copies are the batch's). A decided
    card is shown by one process only, the one that takes its showing (``tools.showing``), and
    recorded shown once all of it went out; a card still waiting for a second approval has
    nothing to record.
    """
    if record.batch_id is not None:
        await show_batch(surface, adapter, record.batch_id)
        return
    if record.status not in DECIDED:
        await _show(surface, adapter, record)
        return
    registry = surface.registry
    if await showing.take(registry, record.card_id, now=registry.clock()) is None:
        log.info("decision_shown_elsewhere", card_id=record.card_id, status=str(record.status))
        return
    with registry.lease.executing(record.card_id):
        if await _show(surface, adapter, record):
            await registry.cards.mark_shown(record.card_id, registry.clock())


async def redraw(surface: Surface, adapter: Adapter, record: CardRecord) -> bool:
    """Shows a decision whose showing this process took (``tools.showing``) on this surface;
    whether all of it went out. The caller records it shown."""
    with surface.registry.lease.executing(record.card_id):
        return await _show(surface, adapter, record)


async def _show(surface: Surface, adapter: Adapter, record: CardRecord) -> bool:
    """The copies, then the audit line, then the model; whether the copies and the line went out.

    The line waits while a copy could not be updated: the decision is shown again later, and
    posting it now would post it twice.
    """
    copies, updated = await _update_copies(surface, adapter, record)
    told = updated
    if updated and copies and record.status not in _UNAUDITED:
        channel = await audit_channel(surface, copies[0])
        told = await adapter.post_audit(record, copies[0], audit_channel=channel)
    note = wording.conversation_note(
        str(record.status),
        record.summary,
        record.decided_by_name or " and ".join(a.name for a in record.approvals) or "Someone",
        record.reason,
        record.outcome,
    )
    if told or record.status not in DECIDED:
        for conversation in dict.fromkeys(p.conversation for p in copies if p.conversation):
            await surface.assistant.record(conversation=conversation, text=note)
    log.info(
        "decision_shown",
        card_id=record.card_id,
        status=str(record.status),
        copies=len(copies),
        complete=told,
    )
    return told


# Nobody decided these: no line for the channel. A card still pending took an approval and
# waits for a second one; its copies show it, and the channel hears when it is decided.
_UNAUDITED = (CardStatus.EXPIRED, CardStatus.SUPERSEDED, CardStatus.PENDING)


async def update_copies(surface: Surface, adapter: Adapter, record: CardRecord) -> list[Placement]:
    """Shows the card as it stands on every copy on the adapter's surface; returns the copies."""
    copies, _ = await _update_copies(surface, adapter, record)
    return copies


async def _update_copies(
    surface: Surface, adapter: Adapter, record: CardRecord
) -> tuple[list[Placement], bool]:
    """Every copy on the adapter's surface updated; the copies, and whether each is shown.

    The copies are read afresh: the record a press decided was read before the write, and a
    private copy sent meanwhile (a turn still sending the approvers theirs) would otherwise
    keep live buttons on a decided card.
    """
    fresh = await surface.registry.card(record.card_id)
    every = placements_of(fresh if fresh is not None else record)
    copies = [p for p in every if p.platform == adapter.platform]
    moved: list[tuple[Placement, Placement]] = []
    updated = True
    for placement in copies:
        anew = await adapter.update(record, placement)
        if isinstance(anew, bool):
            updated = updated and anew
        else:
            moved.append((placement, anew))
    if moved:
        # A copy whose message was gone was posted anew: record where, so the audit line and
        # any later update reach it.
        def swap(where: dict[str, Any] | None) -> dict[str, Any]:
            return stored([_moved(p, moved) for p in placements_of_stored(where)])

        await surface.registry.cards.change_surface(record.card_id, swap)
        copies = [_moved(p, moved) for p in copies]
    return copies, updated


def _moved(placement: Placement, moved: list[tuple[Placement, Placement]]) -> Placement:
    return next((anew for old, anew in moved if old == placement), placement)


async def audit_channel(surface: Surface, placement: Placement) -> str | None:
    """The audit channel set for the copy's installation (Slack workspaces have one), or None."""
    if not isinstance(placement, SlackPlacement) or not placement.team:
        return None
    found = await Connections(surface.registry.db).connection(placement.platform, placement.team)
    return found.audit_channel if found is not None else None
