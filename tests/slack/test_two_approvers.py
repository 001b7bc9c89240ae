"""A card needing two approvers (Fiesta Foods, ₹25,000 and more): counted once each, run once."""

from __future__ import annotations

import asyncio
from copy import deepcopy
from dataclasses import replace

from bot.sandbox import Message
from bot.sandbox.payloads import message
from tests.slack.conftest import CHANNEL, Bot, buttons, card_id, request_status, said, validate
from tools import CardStatus

PROGRESS = "Approved by Arjun Mehta, 1 of 2; waiting for a second manager."


async def big_card(bot: Bot) -> tuple[str, Message, dict[str, Message]]:
    """Ravi asks to approve request 5 (₹42,000); returns its id, the thread's card, the copies."""
    await bot.mention("URAVI", "approve request 5")
    [card] = bot.cards()
    copies = {user: bot.cards(bot.dm(user))[0] for user in ("UARJUN", "UMEERA")}
    return card_id(card), card, copies


async def test_a_first_approval_is_shown_and_runs_nothing(bot: Bot) -> None:
    """Arjun's approval is counted and shown on every copy ("1 of 2"), the card stays live for
    the others, request 5 stays pending, and the channel hears nothing yet."""
    cid, card, copies = await big_card(bot)
    assert "Needs 2 approvals from different people." in said(card.blocks)
    assert await bot.press("UARJUN", copies["UARJUN"]) == 200
    assert await request_status(bot, 5) == "pending"
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.PENDING
    assert [a.name for a in record.approvals] == ["Arjun Mehta"]
    for copy in (card, *copies.values()):
        shown = bot.shown(copy)
        validate(shown.blocks)
        assert PROGRESS in said(shown.blocks)
        assert shown.blocks[0]["text"]["text"] == "Waiting for a manager: Meera Iyer"
    assert buttons(bot.shown(card).blocks) == [
        "card_approve",
        "card_edit",
        "card_reject",
        "card_withdraw",
    ]
    assert buttons(bot.shown(copies["UMEERA"]).blocks) == [
        "card_approve",
        "card_edit",
        "card_reject",
    ]
    assert not [m for m in bot.slack.messages if m.reply_broadcast]
    assert buttons(bot.home("UARJUN")["blocks"]) == []
    assert buttons(bot.home("UMEERA")["blocks"]) == ["card_approve", "card_edit", "card_reject"]


async def test_the_first_approvers_own_copy_no_longer_offers_approve(bot: Bot) -> None:
    """After Arjun's first of two approvals his DM copy shows "1 of 2" with no buttons (there
    is nothing left for him to press), while Meera's copy and the thread's card keep theirs."""
    _, card, copies = await big_card(bot)
    await bot.press("UARJUN", copies["UARJUN"])
    arjun = bot.shown(copies["UARJUN"])
    validate(arjun.blocks)
    assert PROGRESS in said(arjun.blocks)
    assert buttons(arjun.blocks) == []
    assert buttons(bot.shown(copies["UMEERA"]).blocks) == [
        "card_approve",
        "card_edit",
        "card_reject",
    ]
    assert "card_approve" in buttons(bot.shown(card).blocks)


async def test_the_same_approver_twice_is_refused(bot: Bot) -> None:
    """Arjun approving again (from a copy not yet redrawn, or the thread's card) is told he
    already approved; it does not count as the second approval."""
    cid, _, copies = await big_card(bot)
    stale = replace(copies["UARJUN"], blocks=deepcopy(copies["UARJUN"].blocks))
    await bot.press("UARJUN", copies["UARJUN"])
    updates = len(bot.slack.called("chat.update"))
    await bot.press("UARJUN", stale)
    told = bot.ephemerals("UARJUN")
    assert len(told) == 1 and "already approved this card" in told[0], told
    assert len(bot.slack.called("chat.update")) == updates
    record = await bot.registry.card(cid)
    assert record is not None and len(record.approvals) == 1
    assert await request_status(bot, 5) == "pending"


async def test_the_second_approval_runs_it_and_names_both(bot: Bot) -> None:
    """Meera's approval after Arjun's runs request 5 once; the settled card and the one audit
    line name both of them."""
    _, card, copies = await big_card(bot)
    await bot.press("UARJUN", copies["UARJUN"])
    await bot.press("UMEERA", copies["UMEERA"])
    assert await request_status(bot, 5) == "approved"
    for copy in (card, *copies.values()):
        shown = bot.shown(copy)
        assert shown.blocks[0]["text"]["text"] == "Approved and done"
        assert buttons(shown.blocks) == []
        assert "Arjun Mehta and Meera Iyer" in said(shown.blocks), said(shown.blocks)
    audit = [m.text for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]
    assert len(audit) == 1
    assert audit[0].startswith(
        ":white_check_mark: Approved and done (Arjun Mehta and Meera Iyer): Approve request 5"
    )


async def test_two_first_approvals_at_once_both_count_and_run_it_once(bot: Bot) -> None:
    """Arjun and Meera approving at the same moment, neither having seen the other: both
    approvals are kept, request 5 is approved exactly once, and nobody is told it failed."""
    cid, card, copies = await big_card(bot)
    await asyncio.gather(
        bot.press("UARJUN", copies["UARJUN"]), bot.press("UMEERA", copies["UMEERA"])
    )
    assert await request_status(bot, 5) == "approved"
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.DONE
    assert sorted(a.name for a in record.approvals) == ["Arjun Mehta", "Meera Iyer"]
    assert bot.ephemerals("UARJUN") == [] and bot.ephemerals("UMEERA") == []
    audit = [m.text for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]
    assert len(audit) == 1 and "Arjun Mehta" in audit[0] and "Meera Iyer" in audit[0]
    assert buttons(bot.shown(card).blocks) == []


async def test_a_card_asked_for_in_ones_own_dm_offers_nothing_after_ones_first_approval(
    bot: Bot,
) -> None:
    """Arjun asks in his DM with the app for request 5 (₹42,000) and approves it there, the
    first of two: that card, which only he reads, shows it waiting for the second manager and
    offers him only Withdraw, instead of an Approve that is refused when he presses it."""
    dm = bot.dm("UARJUN")
    await bot.send(
        message("UARJUN", "approve request 5", channel=dm, ts=bot.ts(), channel_type="im")
    )
    [card] = bot.cards(dm)
    assert await bot.press("UARJUN", card) == 200
    shown = bot.shown(card)
    validate(shown.blocks)
    assert PROGRESS in said(shown.blocks)
    assert buttons(shown.blocks) == ["card_withdraw"]
    assert bot.ephemerals("UARJUN") == []
    assert await request_status(bot, 5) == "pending"
