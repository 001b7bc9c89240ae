"""Reject: the button opens a reason modal; submitting it rejects the card for everyone to see."""

from __future__ import annotations

import json

from sqlalchemy import select

from tests.slack.conftest import CHANNEL, Bot, rich_said
from tests.support.slack_requests import view_submission
from tools.toolsets.merchant.models import BranchRequest


async def test_reject_with_a_reason_through_the_modal(bot: Bot) -> None:
    """Reject opens a modal; the reason submitted reaches the card, the channel and the model."""
    thread = await bot.mention("UARJUN", "approve request 3")
    card = bot.cards()[0]
    await bot.press("UARJUN", card, action="card_reject")
    opened = bot.slack.called("views.open")
    assert len(opened) == 1
    view = opened[0]["view"]
    assert view["callback_id"] == "card_reject_modal"
    assert json.loads(view["private_metadata"])["channel"] == CHANNEL
    assert bot.slack.called("chat.update") == []  # nothing happens until the modal is submitted

    assert (
        await bot.interact(view_submission("UARJUN", view, reason="Budget is frozen <!here>"))
        == 200
    )
    updated = bot.slack.message(CHANNEL, card.ts)
    assert updated.blocks[0]["text"]["text"] == "Not approved"
    assert "Budget is frozen <!here>" in rich_said(updated.blocks[-1])
    audit = [m for m in bot.slack.thread(CHANNEL, thread) if m.reply_broadcast]
    assert len(audit) == 1
    assert audit[0].text.startswith(":no_entry_sign: Not approved (Arjun Mehta): Approve request 3")
    assert "Nothing was changed; request 3 is still pending." in audit[0].text
    assert audit[0].text.endswith("Reason: Budget is frozen &lt;!here&gt;")
    assert "<!here>" not in audit[0].text
    note = bot.assistant.notes[-1][1]
    assert "Budget is frozen <!here>" in note and "It was not done" in note
    async with bot.services.db.session() as session:
        status = await session.scalar(select(BranchRequest.status).where(BranchRequest.id == 3))
    assert status == "pending"  # rejecting the card leaves the request as it was


async def test_reject_without_a_reason(bot: Bot) -> None:
    """The reason is optional: an empty modal still rejects the card."""
    await bot.mention("UARJUN", "approve request 3")
    card = bot.cards()[0]
    await bot.press("UARJUN", card, action="card_reject")
    view = bot.slack.called("views.open")[0]["view"]
    await bot.interact(view_submission("UARJUN", view, reason=None))
    assert bot.slack.message(CHANNEL, card.ts).blocks[0]["text"]["text"] == "Not approved"
    assert "none given" in rich_said(bot.slack.message(CHANNEL, card.ts).blocks[-1])


async def test_someone_elses_reject_opens_no_modal(bot: Bot) -> None:
    """Meera pressing Reject on Arjun's card is told whose it is; no modal, nothing changes."""
    await bot.mention("UARJUN", "approve request 3")
    card = bot.cards()[0]
    await bot.press("UMEERA", card, action="card_reject")
    assert bot.slack.called("views.open") == []
    assert "belongs to <@UARJUN>" in bot.ephemerals("UMEERA")[0]


async def test_rejection_submitted_by_someone_else_is_refused(bot: Bot) -> None:
    """Even a modal submitted by another person (a forged submission) cannot reject the card."""
    await bot.mention("UARJUN", "approve request 3")
    card = bot.cards()[0]
    await bot.press("UARJUN", card, action="card_reject")
    view = bot.slack.called("views.open")[0]["view"]
    await bot.interact(view_submission("UMEERA", view, reason="mine now"))
    assert bot.slack.called("chat.update") == []
    assert "belongs to <@UARJUN>" in bot.ephemerals("UMEERA")[0]
