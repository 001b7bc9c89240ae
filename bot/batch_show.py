"""Shows a batch as it stands: every copy updated, one audit line once settled, the model told; never decides.

The batch's copies (the thread's card, each approver's private copy) are stored with the batch,
not with its cards. Whatever moved one of its cards (a press on the batch, the expiry sweep, the
reconciler) shows the whole batch here. The channel's audit line for a settled batch is posted
once across every process and every press: two presses that each ran some of its cards both
end here, and only the first to claim the line posts it.
"""

from __future__ import annotations

from typing import Any

import structlog

from bot import batchwords, receipts
from bot.adapter import Adapter
from bot.placement import (
    Placement,
    SlackPlacement,
    placements_of,
    placements_of_stored,
    stored,
)
from bot.surface import Surface
from tools import CardRecord, CardStatus
from tools.batching import BatchRecord, change_surface, load
from tools.connections import Connections

__all__ = ["copies_of", "settled", "show_batch"]

log = structlog.get_logger("bot.batch_show")

# Nobody decided these: no line for the channel.
_UNAUDITED = frozenset({CardStatus.EXPIRED, CardStatus.SUPERSEDED})
_OPEN = frozenset({CardStatus.PENDING, CardStatus.EXECUTING})


async def copies_of(surface: Surface, record: CardRecord) -> tuple[Placement, ...]:
    """Where a card is shown: its own copies, or, for a card in a batch, the batch's.

    A card in a batch has no message of its own; without this the expiry sweep and the
    reconciler found nowhere to show it, and the batch kept live buttons.
    """
    if record.batch_id is None:
        return placements_of(record)
    batch = await load(surface.registry, record.batch_id)
    return placements_of_stored(batch.surface) if batch is not None else ()


def settled(batch: BatchRecord) -> bool:
    """Whether every card of the batch has ended (none waits, none is mid-write)."""
    return not any(c.status in _OPEN for c in batch.items)


async def show_batch(surface: Surface, adapter: Adapter, batch_id: str) -> BatchRecord | None:
    """Updates every copy on this surface; once settled, the audit line (once) and the model."""
    batch = await load(surface.registry, batch_id)
    if batch is None:
        return None
    copies = [p for p in placements_of_stored(batch.surface) if p.platform == adapter.platform]
    moved: list[tuple[Placement, Placement]] = []
    for placement in copies:
        anew = await adapter.update_batch(batch, placement)
        if anew is not None:
            moved.append((placement, anew))
    if moved:
        await change_surface(surface.registry, batch_id, _swap(moved))
        copies = [next((n for o, n in moved if o == p), p) for p in copies]
    if copies and settled(batch) and await _first_to_tell(surface, batch):
        await _audit(surface, adapter, batch, copies[0])
        await _tell_model(surface, batch, copies)
    log.info("batch_shown", batch_id=batch_id, copies=len(copies), settled=settled(batch))
    return batch


def _swap(moved: list[tuple[Placement, Placement]]) -> Any:
    def swap(where: dict[str, Any] | None) -> dict[str, Any]:
        return stored(
            [next((n for o, n in moved if o == p), p) for p in placements_of_stored(where)]
        )

    return swap


async def _first_to_tell(surface: Surface, batch: BatchRecord) -> bool:
    key = f"batch:settled:{batch.batch_id}"
    return await receipts.claim(surface.registry.db, key, surface.registry.clock())


async def _audit(
    surface: Surface, adapter: Adapter, batch: BatchRecord, placement: Placement
) -> None:
    if all(c.status in _UNAUDITED for c in batch.items):
        return
    by = next((c.decided_by_name for c in batch.items if c.decided_by_name), "") or ""
    text = batchwords.audit_text(by, [(str(c.status), c.summary, c.outcome) for c in batch.items])
    channel = None
    if isinstance(placement, SlackPlacement) and placement.team:
        found = await Connections(surface.registry.db).connection("slack", placement.team)
        channel = found.audit_channel if found is not None else None
    await adapter.post_batch_audit(text, placement, audit_channel=channel)


async def _tell_model(surface: Surface, batch: BatchRecord, copies: list[Placement]) -> None:
    by = next((c.decided_by_name for c in batch.items if c.decided_by_name), "") or "Someone"
    note = batchwords.model_note(
        by, [(str(c.status), c.summary, c.reason, c.outcome) for c in batch.items]
    )
    for conversation in dict.fromkeys(p.conversation for p in copies if p.conversation):
        await surface.assistant.record(conversation=conversation, text=note)
