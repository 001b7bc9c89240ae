"""How a card ends without running: withdrawn, not approved, replaced, expired; and asked twice."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from bot.presses import sweeps
from tests.slack.conftest import CHANNEL, Bot, buttons, card_id, request_status, said, validate
from tests.support.slack_requests import view_submission
from tools import CardStatus


async def test_the_asker_withdraws_and_every_copy_says_so(bot: Bot) -> None:
    """Ravi's Withdraw on his routed card ends it: the thread's card and the managers' copies
    show "Withdrawn", by whom, that nothing changed, and no buttons."""
    await bot.mention("URAVI", "approve request 1")
    [card] = bot.cards()
    copy = bot.cards(bot.dm("UARJUN"))[0]
    cid = card_id(card)
    confirm = next(
        e["confirm"]
        for b in card.blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "card_withdraw"
    )
    assert confirm["confirm"]["text"] == "Yes, withdraw"
    assert await bot.press("URAVI", card, action="card_withdraw") == 200
    for shown in (bot.shown(card), bot.shown(copy)):
        validate(shown.blocks)
        assert shown.blocks[0]["text"]["text"] == "Withdrawn"
        assert buttons(shown.blocks) == []
        assert "Withdrawn by Ravi Kumar · <!date^" in said(shown.blocks)
        assert "Nothing was changed; request 1 is still pending." in said(shown.blocks)
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.WITHDRAWN
    assert await request_status(bot, 1) == "pending"
    assert bot.ephemerals("URAVI") == []


async def test_withdraw_by_anyone_but_the_asker_is_refused_privately(bot: Bot) -> None:
    """Arjun pressing Withdraw on Ravi's card is told only the asker may; the card stays live
    and unchanged."""
    await bot.mention("URAVI", "approve request 1")
    [card] = bot.cards()
    before = list(card.blocks)
    await bot.press("UARJUN", card, action="card_withdraw")
    assert bot.ephemerals("UARJUN") == [
        ":no_entry: Only the person who asked for this card can withdraw it. Nothing was changed."
    ]
    assert bot.slack.called("chat.update") == []
    assert bot.shown(card).blocks == before
    record = await bot.registry.card(card_id(card))
    assert record is not None and record.status is CardStatus.PENDING


async def test_a_declined_card_reads_not_approved_and_says_what_stands(bot: Bot) -> None:
    """Declining Arjun's "reject request 6" card: the heading is "Not approved" (never
    "Rejected" over "Reject request 6"), it says who, that request 6 is still pending, and
    shows the status as it stays, not the "pending → rejected" that never happened."""
    await bot.mention("UARJUN", "reject request 6 because it is a duplicate")
    [card] = bot.cards()
    assert "pending → rejected" in said(card.blocks)
    await bot.press("UARJUN", card, action="card_reject")
    view = bot.slack.called("views.open")[0]["view"]
    await bot.interact(view_submission("UARJUN", view, reason="keep it open"))
    shown = bot.shown(card)
    validate(shown.blocks)
    words = said(shown.blocks)
    assert shown.blocks[0]["text"]["text"] == "Not approved"
    assert "Not approved by Arjun Mehta · <!date^" in words
    assert "Reason: keep it open" in words
    assert "Nothing was changed; request 6 is still pending." in words
    assert "pending → rejected" not in words and "pending (rejected was proposed)" in words
    assert await request_status(bot, 6) == "pending"
    [audit] = [m.text for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]
    assert audit.startswith(":no_entry_sign: Not approved (Arjun Mehta): Reject request 6")
    assert "Nothing was changed; request 6 is still pending. Reason: keep it open" in audit


async def test_the_same_request_asked_twice_points_to_the_live_card(bot: Bot) -> None:
    """Ravi asking for request 2 twice gets one card: the second answer points to the card
    already waiting, and only one card is live."""
    await bot.mention("URAVI", "approve request 2")
    [card] = bot.cards()
    again = await bot.mention("URAVI", "approve request 2")
    assert bot.cards() == [card]
    answer = bot.slack.thread(CHANNEL, again)[-1].text
    assert "already waiting on a card" in answer and "No new card was made" in answer
    assert buttons(bot.shown(card).blocks) != []
    live = await bot.card_store.pending_in(1, bot.clock())
    assert [c.card_id for c in live] == [card_id(card)]


async def test_a_different_write_on_the_same_target_replaces_the_card(bot: Bot) -> None:
    """ "refund order 12 250" then "refund order 12": the first card says "Replaced", by what,
    that nothing changed, and loses its buttons; only the new one is live."""
    await bot.mention("UARJUN", "refund order 12 250")
    [old] = bot.cards()
    old_id = card_id(old)
    await bot.mention("UARJUN", "refund order 12")
    [new] = bot.cards()
    shown = bot.shown(old)
    validate(shown.blocks)
    words = said(shown.blocks)
    assert shown.blocks[0]["text"]["text"] == "Replaced"
    assert buttons(shown.blocks) == []
    assert "Replaced by a newer card: Refund ₹1,752.00 on order 12" in words
    assert "Nothing was changed" in words
    assert "₹0.00 (₹250.00 was proposed)" in words
    record = await bot.registry.card(old_id)
    assert record is not None and record.status is CardStatus.SUPERSEDED
    live = await bot.card_store.pending_in(1, bot.clock())
    assert [c.card_id for c in live] == [card_id(new)]
    assert not [m for m in bot.slack.messages if m.reply_broadcast]


async def test_the_expiry_sweep_shows_every_copy_expired_and_refreshes_homes(bot: Bot) -> None:
    """Past its time, the sweep shows the thread's card and the DM copies "Expired" with no
    buttons, posts no audit line, and republishes the App Home of everyone it concerned."""
    await bot.mention("URAVI", "approve request 1")
    [card] = bot.cards()
    copy = bot.cards(bot.dm("UMEERA"))[0]
    cid = card_id(card)
    for user in ("UARJUN", "URAVI"):
        await bot.send({"type": "app_home_opened", "user": user, "tab": "home"})
    assert buttons(bot.home("URAVI")["blocks"]) == ["card_withdraw"]
    published = len(bot.slack.called("views.publish"))

    bot.clock.step(timedelta(minutes=31))
    assert await sweeps.expire(bot.services, bot.mounted, now=bot.clock()) == 1

    for shown in (bot.shown(card), bot.shown(copy)):
        validate(shown.blocks)
        assert shown.blocks[0]["text"]["text"] == "Expired"
        assert buttons(shown.blocks) == []
        assert "Nobody approved this in time" in said(shown.blocks)
        # Said once, with what still stands: it used to read "nothing was changed" twice.
        assert said(shown.blocks).count("othing was changed") == 1, said(shown.blocks)
        assert "Nothing was changed; request 1 is still pending." in said(shown.blocks)
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.EXPIRED
    assert not [m for m in bot.slack.messages if m.reply_broadcast]
    refreshed = [c["user_id"] for c in bot.slack.called("views.publish")[published:]]
    assert sorted(refreshed) == ["UARJUN", "UMEERA", "URAVI"]
    assert buttons(bot.home("URAVI")["blocks"]) == []
    assert buttons(bot.home("UARJUN")["blocks"]) == []


# The shortest grace period the settings allow: the sweep then runs every 1.25 s, not every 5.
@pytest.mark.parametrize("bot", [{"countersign_reconcile_after": 5}], indirect=True)
async def test_the_running_server_expires_an_untouched_card_by_itself(bot: Bot) -> None:
    """Nobody presses anything: once the card's time has run out, the server's own sweep (the
    loop every process runs) shows it Expired without buttons, within a few of its rounds."""
    await bot.mention("URAVI", "approve request 1")
    [card] = bot.cards()
    bot.clock.step(timedelta(minutes=31))
    deadline = asyncio.get_running_loop().time() + 60
    while buttons(bot.shown(card).blocks):
        assert asyncio.get_running_loop().time() < deadline, "the sweep never expired the card"
        await asyncio.sleep(0.2)  # polling a condition: the sweep runs on its own schedule
    assert bot.shown(card).blocks[0]["text"]["text"] == "Expired"
