"""A staff member's card routed to the managers: the thread's card, their DM copies, who may press."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy import update as sa_update

from bot.presses import sweeps
from bot.sandbox import Message
from tests.slack.conftest import (
    CHANNEL,
    Bot,
    buttons,
    card_id,
    request_status,
    said,
    validate,
)
from tools import CardStatus
from tools.db import AuditRow
from tools.toolsets.merchant.models import BranchRequest

# The Fiesta Foods policy: a manager approves. Priya, the owner, hears of a card only when it
# waits too long (escalation).
APPROVERS = {"UARJUN": "Arjun Mehta", "UMEERA": "Meera Iyer"}
TITLE = "Waiting for a manager: Arjun Mehta or Meera Iyer"


async def routed(bot: Bot, text: str = "approve request 1") -> tuple[Message, dict[str, Message]]:
    """Ravi (staff) asks in the channel; returns the thread's card and each approver's copy."""
    await bot.mention("URAVI", text)
    [card] = bot.cards()
    copies = {user: bot.cards(bot.dm(user)) for user in APPROVERS}
    assert all(len(found) == 1 for found in copies.values()), copies
    return card, {user: found[0] for user, found in copies.items()}


async def test_a_staff_request_is_issued_to_the_managers_each_told_in_a_dm(bot: Bot) -> None:
    """Ravi's 'approve request 1' is not refused: the thread's card says it waits for a
    manager and names them, and each of them (not the owner) gets a copy in their DM whose
    push says what and who asked, with Approve, Edit and Reject only."""
    card, copies = await routed(bot)
    validate(card.blocks)
    assert card.blocks[0]["text"]["text"] == TITLE
    assert buttons(card.blocks) == ["card_approve", "card_edit", "card_reject", "card_withdraw"]
    opened = [c["users"] for c in bot.slack.called("conversations.open")]
    assert sorted(opened) == sorted(APPROVERS)
    for user, copy in copies.items():
        validate(copy.blocks)
        assert copy.text.startswith("Ravi Kumar needs your approval: Approve request 1 — ")
        assert copy.blocks[0]["text"]["text"] == TITLE
        assert buttons(copy.blocks) == ["card_approve", "card_edit", "card_reject"]
        assert card_id(copy) == card_id(card), user
    dms = {copy.channel for copy in copies.values()}
    posted = [c for c in bot.slack.called("chat.postMessage") if c["channel"] in dms]
    assert len(posted) == 2
    assert bot.cards(bot.dm("UPRIYA")) == []
    assert {(c["parse"], c["unfurl_links"]) for c in posted} == {("none", False)}
    assert await request_status(bot, 1) == "pending"


async def test_the_asker_pressing_approve_on_a_routed_card_is_refused_privately(bot: Bot) -> None:
    """Ravi cannot approve his own routed card: he alone is told whom it waits for, by name
    (he was told to read its heading), and nothing changes."""
    card, _ = await routed(bot)
    assert await bot.press("URAVI", card) == 200
    assert bot.ephemerals("URAVI") == [
        "This card is waiting for Arjun Mehta or Meera Iyer, not for you, so only they can "
        "approve or reject it. Nothing was changed."
    ]
    assert bot.slack.called("chat.update") == []
    assert await request_status(bot, 1) == "pending"


async def test_a_manager_approves_from_her_dm_and_every_copy_shows_it(bot: Bot) -> None:
    """Meera's Approve in her DM runs the write once; the thread's card and both DM copies
    show it settled with no buttons, one audit line goes to the channel, and every App Home
    the card concerns is republished without it."""
    card, copies = await routed(bot)
    cid = card_id(card)
    assert await bot.press("UMEERA", copies["UMEERA"]) == 200
    assert await request_status(bot, 1) == "approved"
    for shown in (bot.shown(card), *(bot.shown(c) for c in copies.values())):
        validate(shown.blocks)
        assert shown.blocks[0]["text"]["text"] == "Approved and done"
        assert buttons(shown.blocks) == []
        assert "approved by Meera Iyer" in said(shown.blocks)
    shown_on = {card.ts, *(c.ts for c in copies.values())}
    assert len([c for c in bot.slack.called("chat.update") if c["ts"] in shown_on]) == 3
    audit = [m for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]
    assert len(audit) == 1
    assert audit[0].text.startswith(":white_check_mark: Approved and done (Meera Iyer): Approve")
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.DONE
    for user in (*APPROVERS, "URAVI"):
        assert buttons(bot.home(user)["blocks"]) == [], user


async def test_two_managers_pressing_at_once_execute_it_once(bot: Bot) -> None:
    """Arjun and Meera press Approve on their copies at the same moment: the write runs once,
    one audit line is posted, and the one who lost is told privately who decided."""
    card, copies = await routed(bot)
    cid = card_id(card)
    await asyncio.gather(
        bot.press("UARJUN", copies["UARJUN"]), bot.press("UMEERA", copies["UMEERA"])
    )
    assert await request_status(bot, 1) == "approved"
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.DONE
    winner = record.decided_by_name
    loser = "UMEERA" if winner == "Arjun Mehta" else "UARJUN"
    assert winner in ("Arjun Mehta", "Meera Iyer")
    told = bot.ephemerals(loser)
    assert len(told) == 1 and f"already approved by {winner}" in told[0], told
    audit = [m for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]
    assert len(audit) == 1 and f"({winner})" in audit[0].text
    assert buttons(bot.shown(card).blocks) == []


async def test_reject_on_a_routed_card_opens_no_modal_for_its_asker(bot: Bot) -> None:
    """The asker pressing Reject on his routed card is told at once it is not his to decide;
    no reason modal opens for a rejection the engine would refuse."""
    card, _ = await routed(bot)
    await bot.press("URAVI", card, action="card_reject")
    assert bot.slack.called("views.open") == []
    assert bot.ephemerals("URAVI")[0].startswith("This card is not waiting for your approval")


async def test_the_app_home_shows_what_waits_for_you_and_what_waits_for_others(bot: Bot) -> None:
    """Arjun's Home lists Ravi's routed card under "Waiting for you" with Approve, Edit and Reject;
    Ravi's lists it under "Waiting for others", saying whom it waits for, with Withdraw only."""
    await routed(bot)
    for user in ("UARJUN", "URAVI"):
        await bot.send({"type": "app_home_opened", "user": user, "tab": "home"})
    arjun, ravi = bot.home("UARJUN")["blocks"], bot.home("URAVI")["blocks"]
    validate(arjun)
    validate(ravi)
    assert "*Waiting for you* · 1 card" in said(arjun)
    assert "Waiting for others" not in said(arjun)
    assert buttons(arjun) == ["card_approve", "card_edit", "card_reject"]
    assert "No cards are waiting for you." in said(ravi)
    assert "*Waiting for others* · 1 card you asked for" in said(ravi)
    assert "Waiting for Arjun Mehta or Meera Iyer · expires <!date^" in said(ravi)
    assert buttons(ravi) == ["card_withdraw"]


async def test_pending_lists_both_sections_privately(bot: Bot) -> None:
    """`/countersign pending` gives Ravi his routed card under "Waiting for others" with
    Withdraw, and Meera the same card under "Waiting for you" with Approve, Edit and Reject."""
    from tests.slack.test_commands import slash

    await routed(bot)
    await slash(bot, "URAVI", "pending")
    ravi = bot.slack.responses[-1]
    assert ravi["text"] == "1 card you asked for is waiting for others."
    assert buttons(ravi["blocks"]) == ["card_withdraw"]
    await slash(bot, "UMEERA", "pending")
    meera = bot.slack.responses[-1]
    assert meera["text"] == "1 approval card is waiting for you."
    assert buttons(meera["blocks"]) == ["card_approve", "card_edit", "card_reject"]
    validate(meera["blocks"])


async def test_an_escalation_keeps_every_copy_live_and_reaches_the_owner(bot: Bot) -> None:
    """A routed card left undecided past the merchant's delay is escalated to Priya, the owner:
    every copy is redrawn still pending, naming her, with its buttons; she gets her own copy,
    and her App Home lists it."""
    card, copies = await routed(bot)
    assert bot.cards(bot.dm("UPRIYA")) == []
    bot.clock.step(timedelta(minutes=16))
    updates = len(bot.slack.called("chat.update"))

    assert await sweeps.escalate(bot.services, bot.mounted, now=bot.clock(), after=900) == 1

    wider = "Waiting for a manager or the owner: Arjun Mehta, Meera Iyer or Priya Raman"
    assert len(bot.slack.called("chat.update")) == updates + 3
    for copy in (card, *copies.values()):
        shown = bot.shown(copy)
        validate(shown.blocks)
        assert shown.blocks[0]["text"]["text"] == wider
        assert buttons(shown.blocks) == ["card_approve", "card_edit", "card_reject"] + (
            ["card_withdraw"] if copy is card else []
        )
    [priya] = bot.cards(bot.dm("UPRIYA"))
    assert priya.text.startswith("Ravi Kumar needs your approval: Approve request 1")
    assert buttons(bot.home("UPRIYA")["blocks"]) == ["card_approve", "card_edit", "card_reject"]
    assert await request_status(bot, 1) == "pending"


async def test_a_managers_own_request_goes_to_the_other_manager(bot: Bot) -> None:
    """Arjun asks to approve request 4, which he raised: the thread's card waits for Meera,
    she alone gets a DM copy, Arjun's press is refused, and Meera's approves it."""
    await bot.mention("UARJUN", "approve request 4")
    [card] = bot.cards()
    assert card.blocks[0]["text"]["text"] == "Waiting for a manager: Meera Iyer"
    assert len(bot.cards(bot.dm("UMEERA"))) == 1 and bot.cards(bot.dm("UARJUN")) == []
    assert await bot.press("UARJUN", card) == 200
    assert bot.ephemerals("UARJUN")[-1].startswith(
        "This card is waiting for Meera Iyer, not for you"
    )
    assert await request_status(bot, 4) == "pending"
    assert await bot.press("UMEERA", bot.cards(bot.dm("UMEERA"))[0]) == 200
    assert await request_status(bot, 4) == "approved"


async def test_staff_asking_again_is_pointed_to_the_managers_card(bot: Bot) -> None:
    """Arjun's card rejecting request 2 waits; Ravi's "approve request 2" leaves it live and
    tells him whose card is waiting, instead of replacing it."""
    await bot.mention("UARJUN", "reject request 2 because not our fault")
    [card] = bot.cards()
    await bot.mention("URAVI", "approve request 2")
    assert len(bot.cards()) == 1
    assert "A card Arjun Mehta asked for is already waiting" in bot.slack.messages[-1].text
    record = await bot.registry.card(card_id(card))
    assert record is not None and record.status is CardStatus.PENDING


async def test_an_escalation_never_reaches_the_owner_who_raised_the_request(bot: Bot) -> None:
    """Priya raised request 6; Ravi's card for it waits too long. The sweep sends it to no
    owner (she is the only one), so she never gets a copy of a card approving her own request."""
    async with bot.services.db.session() as session, session.begin():
        await session.execute(
            sa_update(BranchRequest).where(BranchRequest.id == 6).values(requested_by=1)
        )
    card, _ = await routed(bot, "approve request 6")
    bot.clock.step(timedelta(minutes=16))
    await sweeps.escalate(bot.services, bot.mounted, now=bot.clock(), after=900)
    assert bot.cards(bot.dm("UPRIYA")) == []
    record = await bot.registry.card(card_id(card))
    assert record is not None and [i.name for i in record.issued_to] == list(APPROVERS.values())


async def _escalations(bot: Bot, card: Message) -> list[str]:
    """The details of the card's escalation audit lines, in order."""
    async with bot.services.db.session() as session:
        rows = await session.scalars(
            select(AuditRow.detail)
            .where(AuditRow.card_id == card_id(card), AuditRow.outcome == "escalated")
            .order_by(AuditRow.id)
        )
    return list(rows)


async def test_an_escalation_records_the_owner_told_once_her_copy_went(bot: Bot) -> None:
    """The audit of an escalation says Priya was issued the card, then that her copy reached
    her: each line records what had happened when it was written."""
    card, _ = await routed(bot)
    bot.clock.step(timedelta(minutes=16))
    await sweeps.escalate(bot.services, bot.mounted, now=bot.clock(), after=900)
    assert len(bot.cards(bot.dm("UPRIYA"))) == 1
    assert await _escalations(bot, card) == [
        "issued to Priya Raman",
        "Priya Raman told in Slack",
    ]


async def test_an_escalation_whose_copy_never_reached_the_owner_says_so(bot: Bot) -> None:
    """Slack refusing Priya's DM (her account deactivated): the escalation used to be audited
    "sent to Priya Raman" before her copy was sent, and stayed so when it failed. Now the
    record says she was issued the card and could not be reached."""
    card, _ = await routed(bot)
    bot.slack.closed.add("UPRIYA")
    bot.clock.step(timedelta(minutes=16))
    assert await sweeps.escalate(bot.services, bot.mounted, now=bot.clock(), after=900) == 1
    assert bot.cards(bot.dm("UPRIYA")) == []
    details = await _escalations(bot, card)
    assert not any("sent to" in d for d in details), details
    assert details == [
        "issued to Priya Raman",
        "Priya Raman could not be reached in Slack",
    ]
