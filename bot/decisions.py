"""Shows what the engine decided about a card: every copy updated, the audit line, the model told; never decides.

The same for every outcome and every surface: a press that approved, rejected or failed, a card
that expired, one the reconciler settled after a crash. Each copy of the card on the adapter's
platform is updated in place (no live buttons once decided), the first copy's channel gets the
audit line (an expiry gets none: nobody decided anything), and the model is told in the
conversation the card came from, so its next answer is true.
"""

from __future__ import annotations

import structlog

from bot import wording
from bot.adapter import Adapter
from bot.placement import placements_of
from bot.surface import Surface
from tools import CardRecord, CardStatus

__all__ = ["show_decision"]

log = structlog.get_logger("bot.decisions")


async def show_decision(surface: Surface, adapter: Adapter, record: CardRecord) -> None:
    """Updates every copy on this surface, posts the audit line once and tells the model once."""
    copies = [p for p in placements_of(record) if p.platform == adapter.platform]
    for placement in copies:
        await adapter.update(record, placement)
    if copies and record.status is not CardStatus.EXPIRED:
        await adapter.post_audit(record, copies[0])
    note = wording.conversation_note(
        str(record.status),
        record.summary,
        record.decided_by_name or "Someone",
        record.reason,
        record.outcome,
    )
    for conversation in dict.fromkeys(p.conversation for p in copies if p.conversation):
        await surface.assistant.record(conversation=conversation, text=note)
    log.info(
        "decision_shown", card_id=record.card_id, status=str(record.status), copies=len(copies)
    )
