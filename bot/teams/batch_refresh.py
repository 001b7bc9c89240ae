"""Answers Teams' refresh of a batch card with the view its reader may act on; never decides anything.

Teams asks for a card's view when someone in ``refresh.userIds`` opens it: a person the batch
is issued to (who has not approved it) gets "Approve all N" and Reject, its asker Withdraw,
anyone else the status. Only a batch posted in the conversation asking is shown.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.hosting.core import TurnContext

from bot import identity
from bot.placement import TeamsPlacement, placements_of_stored
from bot.surface import Surface
from bot.teams.adapter import TeamsAdapter
from bot.teams.adaptive import notice_card
from bot.teams.batch import batch_card, batch_view
from bot.teams.identity import who
from tools import Caller
from tools.batching import load

__all__ = ["batch_answer", "refresh_batch"]


async def refresh_batch(surface: Surface, context: TurnContext, batch_id: str) -> dict[str, Any]:
    adapter = TeamsAdapter(context, who(context.activity))
    batch = await load(surface.registry, batch_id) if batch_id else None
    placement = adapter.here(placements_of_stored(batch.surface if batch else None))
    if batch is None or not isinstance(placement, TeamsPlacement):
        return notice_card("This approval card is no longer available here.")
    sender = adapter.sender
    resolved = (
        await identity.resolve(surface.directory, adapter, sender.tenant, sender.aad)
        if sender
        else None
    )
    caller = None if isinstance(resolved, str) else resolved
    view = batch_view(batch, caller)
    return batch_card(batch, token=placement.token, view=view, issuee=placement.user)[0]


async def batch_answer(
    surface: Surface, adapter: TeamsAdapter, batch_id: str, notice: str, viewer: Caller | None
) -> dict[str, Any]:
    """The batch as it stands with what the presser was told on it (a refusal, a note), or
    the notice alone when the batch is not shown in this conversation."""
    batch = await load(surface.registry, batch_id) if batch_id else None
    placement = adapter.here(placements_of_stored(batch.surface if batch else None))
    if batch is None or not isinstance(placement, TeamsPlacement):
        return notice_card(notice)
    view = batch_view(batch, viewer)
    return batch_card(batch, token=placement.token, view=view, notice=notice or None)[0]
