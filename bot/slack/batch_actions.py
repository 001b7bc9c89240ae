"""What a press on a Slack batch card needs beyond a card's: its reason modal, its homes; never decides.

Reject on a batch opens the same reason modal as a card's, saying how many changes it rejects;
the submission is a press like any other (``bot.presses`` sends a batch's token to the batch).
"""

from __future__ import annotations

from bot import identity
from bot.adapter import Form
from bot.slack.adapter import SlackAdapter
from bot.surface import Surface
from tools import CardRecord
from tools.batching import load

__all__ = ["first_of_batch", "open_batch_reject"]


async def first_of_batch(surface: Surface, batch_id: str) -> CardRecord | None:
    """The first card of a batch (its people are the batch's), or None when it is no batch."""
    batch = await load(surface.registry, batch_id)
    return batch.items[0] if batch is not None and batch.items else None


async def open_batch_reject(
    surface: Surface, adapter: SlackAdapter, token: str, batch_id: str | None
) -> None:
    """Opens the reason modal for a batch, or tells someone it is not issued to at once."""
    batch = await load(surface.registry, batch_id) if batch_id else None
    if batch is not None and batch.live:
        where = adapter.where
        caller = await identity.resolve(
            surface.directory, adapter, where.installation, where.user, user_team=where.user_team
        )
        if not isinstance(caller, str) and not batch.live[0].issued_to_person(
            caller.userid, caller.tenantid
        ):
            await adapter.post_privately(adapter.words.not_your_card(None))
            return
    summaries = "; ".join(c.summary.rstrip(".") for c in batch.live) if batch else ""
    count = len(batch.live) if batch else 0
    summary = f"all {count} changes: {summaries}." if count else ""
    await adapter.open_form(Form("reject", batch_id or "", token, summary))
