"""A card needing two approvers (Fiesta Foods, ₹25,000 and more): counted once each, run once."""

from __future__ import annotations

import asyncio
import json
from copy import deepcopy
from dataclasses import replace

from bot.sandbox import Message
from bot.sandbox.payloads import block_action, form, message, view_submission
from tests.slack.conftest import (
    CHANNEL,
    Bot,
    approve_modals,
    buttons,
    card_id,
    request_status,
    said,
    validate,
)
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


async def test_a_first_approval_drawn_late_does_not_bring_back_the_buttons(bot: Bot) -> None:
    """Arjun's "1 of 2" redraw reaches Slack after Meera's approval has run request 5 and
    shown it done: Slack keeps the last update, so his late one brought live buttons back onto
    a done card (the one finding of a chaos soak). His process reads the card again after
    drawing it, sees it done, and draws it done."""
    _, card, copies = await big_card(bot)
    held, release, done = asyncio.Event(), asyncio.Event(), asyncio.Event()
    update = bot.slack._chat_update
    drawn_done: set[object] = set()

    async def late(params: dict[str, object]) -> dict[str, object]:
        blocks = json.dumps(params.get("blocks"))
        if PROGRESS in blocks and not release.is_set():
            held.set()
            await release.wait()  # Arjun's process, descheduled mid-draw
        answer = await update(params)
        if "Approved and done" in blocks:
            drawn_done.add(params.get("ts"))
            if len(drawn_done) == 3:  # Meera's press drew every copy done meanwhile
                done.set()
        return answer

    bot.slack._chat_update = late  # type: ignore[method-assign]
    arjun = asyncio.create_task(bot.press("UARJUN", copies["UARJUN"]))
    await asyncio.wait_for(held.wait(), 10)
    meera = asyncio.create_task(bot.press("UMEERA", copies["UMEERA"]))
    await asyncio.wait_for(done.wait(), 10)
    release.set()
    await asyncio.gather(arjun, meera)
    assert await request_status(bot, 5) == "approved"
    for copy in (card, *copies.values()):
        shown = bot.shown(copy)
        assert shown.blocks[0]["text"]["text"] == "Approved and done", said(shown.blocks)
        assert buttons(shown.blocks) == []


async def test_copies_sent_while_the_first_approval_lands_show_it(bot: Bot) -> None:
    """Arjun approves from the thread's card while the private copies are still on their way:
    they were drawn before his approval, so his own offered an Approve he had already given
    and Meera's did not say it waits for her alone. Once stored they are drawn as it stands."""
    held, release, counted = asyncio.Event(), asyncio.Event(), asyncio.Event()
    post, update = bot.slack._chat_postMessage, bot.slack._chat_update
    arjun_dm = bot.dm("UARJUN")

    async def late(params: dict[str, object]) -> dict[str, object]:
        if params.get("channel") in (arjun_dm, "UARJUN") and not release.is_set():
            held.set()
            await release.wait()  # the copies' turn, descheduled mid-send
        return await post(params)

    async def drawn(params: dict[str, object]) -> dict[str, object]:
        answer = await update(params)
        if params.get("channel") == CHANNEL and PROGRESS in json.dumps(params.get("blocks")):
            counted.set()  # his approval counted and drawn on the thread's card
        return answer

    bot.slack._chat_update = drawn  # type: ignore[method-assign]
    bot.slack._chat_postMessage = late  # type: ignore[method-assign]
    asking = asyncio.create_task(bot.mention("URAVI", "approve request 5"))
    await asyncio.wait_for(held.wait(), 10)
    [card] = bot.cards()
    block = next(b for b in card.blocks if b["type"] == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == "card_approve")
    pressed = block_action(
        "UARJUN",
        action_id="card_approve",
        value=button["value"],
        block_id=block["block_id"],
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
    )
    response = await bot.post(form(pressed), "application/x-www-form-urlencoded")
    assert response.status == 200
    # The thread's card asks its confirm in a modal: his "Yes, approve" is the press.
    [view] = approve_modals(bot)
    confirmed = view_submission("UARJUN", view, values={})
    response = await bot.post(form(confirmed), "application/x-www-form-urlencoded")
    assert response.status == 200
    await asyncio.wait_for(counted.wait(), 10)
    release.set()
    await asking
    await bot.settle()
    [arjun] = [m for m in bot.slack.messages if m.channel == arjun_dm and m.blocks]
    [meera] = bot.cards(bot.dm("UMEERA"))
    assert PROGRESS in said(arjun.blocks) and buttons(arjun.blocks) == []
    assert PROGRESS in said(meera.blocks)
    assert buttons(meera.blocks) == ["card_approve", "card_edit", "card_reject"]
    assert await request_status(bot, 5) == "pending"
