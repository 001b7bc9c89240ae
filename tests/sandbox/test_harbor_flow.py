"""Harbor Books, a one-person merchant, in the sandbox: Sam asks, and the card is his to approve."""

from __future__ import annotations

from bot.sandbox import HARBOR_TEAM
from bot.sandbox.people import HARBOR_CHANNEL
from tests.sandbox.conftest import Stack
from tests.sandbox.test_flows import status_of
from tools.db import Database


async def test_sam_approves_his_own_card_and_nobody_else_is_asked(
    stack: Stack, db: Database
) -> None:
    """Sam's "approve request 9" in #harbor-books is a card for Sam himself (no DM copies, no
    "waiting for a manager"); his Approve runs it once and the channel hears it."""
    asked = stack.acting.say("USAM", HARBOR_CHANNEL, "@countersign approve request 9")
    assert asked is not None
    await stack.settle()
    [card] = stack.cards(HARBOR_CHANNEL)
    assert card.blocks[0]["text"]["text"] == "Approval needed from Sam Lee"
    dms = {c.id for c in stack.api.workspace.channels.values() if c.kind == "im"}
    assert not [m for m in stack.api.messages if m.channel in dms and m.user == "UBOT"]
    actions = next(b for b in card.blocks if b["type"] == "actions")
    outcome = await stack.approve(
        "USAM", block_id=actions["block_id"], channel=HARBOR_CHANNEL, ts=card.ts
    )
    assert outcome.ok
    shown = stack.api.message(HARBOR_CHANNEL, card.ts)
    assert shown.blocks[0]["text"]["text"] == "Approved and done"
    audit = [m for m in stack.api.messages if m.reply_broadcast]
    assert len(audit) == 1 and "(Sam Lee): Approve request 9" in audit[0].text
    assert await status_of(db, 9) == "approved"
    assert stack.api.workspace.channels[HARBOR_CHANNEL].team == HARBOR_TEAM
