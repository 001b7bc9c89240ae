"""Edits the answer above a decided card's copy to say what became of the card; never decides or draws it.

The hook ``bot.presses.decisions`` calls once a decision's line is out (its copies drawn, the
model told): the turn's "Not done yet: it is waiting for your approval on the card below."
otherwise stayed word for word above the card it no longer described.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.adapter import Adapter
from bot.cards.answered import settled_answer
from bot.cards.card import Card
from bot.placement import Placement

__all__ = ["settle_answers"]


async def settle_answers(adapter: Adapter, card: Card, copies: Sequence[Placement]) -> None:
    """Edits the answer above each of ``copies`` that has one, once ``card`` is decided."""
    statuses = [str(item.status) for item in card.items]
    for placement in copies:
        if placement.reply is None:
            continue
        text = settled_answer(statuses, placement.reply_said)
        if text is None:
            return  # still waiting: the answer is still true
        await adapter.edit_answer(placement, text)
