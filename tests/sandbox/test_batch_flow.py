"""Several writes in one sandbox message: one card, one Approve all, each write run once."""

from __future__ import annotations

from bot.sandbox import FIESTA_OPS
from tests.sandbox.conftest import Stack
from tests.sandbox.test_flows import ask, status_of
from tools.db import Database


async def test_approve_all_in_the_sandbox_runs_each_request(stack: Stack, db: Database) -> None:
    """ "approve requests 1 and 2" in #fiesta-ops shows one card; Arjun's Approve both (as the
    page sends it) approves both and the card and the channel say so."""
    await ask(stack, "UARJUN", "@countersign approve requests 1 and 2")
    [card] = stack.cards(FIESTA_OPS)
    actions = next(b for b in card.blocks if b["type"] == "actions")
    assert actions["elements"][0]["text"]["text"] == "Approve both"
    outcome = await stack.approve(
        "UARJUN", block_id=actions["block_id"], channel=FIESTA_OPS, ts=card.ts
    )
    assert outcome.ok
    assert stack.api.message(FIESTA_OPS, card.ts).blocks[0]["text"]["text"] == "Approved and done"
    assert [await status_of(db, n) for n in (1, 2)] == ["approved", "approved"]
    audit = [m for m in stack.api.messages if m.reply_broadcast]
    assert len(audit) == 1 and "2 changes in one card" in audit[0].text
