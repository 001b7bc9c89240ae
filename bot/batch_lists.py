"""Lists a person's cards with each batch as one entry (the App Home, ``/countersign pending``); never decides.

The cards of a batch have no buttons of their own (only the batch's token is ever on a button),
so a list that showed them one by one showed writes nobody could press. Each batch is listed
once, where its first waiting card would have been, with the batch's buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.batchspec import as_card
from bot.cardspec import CardSpec
from bot.placement import Platform, placements_of_stored
from bot.surface import Surface
from tools import CardRecord
from tools.batching import load

__all__ = ["listed"]


async def listed(
    surface: Surface,
    records: Sequence[CardRecord],
    spec_of: Callable[[CardRecord], CardSpec],
    platform: Platform,
) -> list[CardSpec]:
    """Each card as ``spec_of`` shows it, each batch once (with its copies' token here)."""
    shown: list[CardSpec] = []
    batches: set[str] = set()
    for record in records:
        if record.batch_id is None:
            shown.append(spec_of(record))
            continue
        if record.batch_id in batches:
            continue
        batches.add(record.batch_id)
        batch = await load(surface.registry, record.batch_id)
        if batch is None:
            continue
        copy = next(
            (p for p in placements_of_stored(batch.surface) if p.platform == platform), None
        )
        now = surface.registry.clock()
        shown.append(as_card(batch, token=copy.token if copy else "", now=now))
    return shown
