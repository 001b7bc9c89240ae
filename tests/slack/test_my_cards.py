"""A person's own cards over /slack/events: asked in words ("my cards", "what is waiting for
me", "withdraw card"), and the private ``/countersign pending`` list kept true in place."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from structlog.testing import capture_logs

from bot.sandbox.webapi import RESPONSE_USES
from bot.sandbox.workspace import Message
from tests.slack.conftest import CHANNEL, Bot, said, validate
from tests.support.slack_requests import command


async def answer(bot: Bot, user: str, text: str) -> str:
    """``user`` mentions the bot with ``text`` in the channel; returns the bot's reply."""
    thread = await bot.mention(user, text)
    replies = [m.text for m in bot.slack.thread(CHANNEL, thread) if m.user == "UBOT"]
    assert len(replies) == 1, replies
    return replies[0]


async def test_my_cards_lists_what_waits_for_you_and_what_you_asked_for(bot: Bot) -> None:
    """After Ravi's routed "approve request 1", Meera's "what is waiting for me" lists it as
    waiting for her, and Ravi's "my cards" lists it as his, waiting for the two managers."""
    await bot.mention("URAVI", "approve request 1")
    meera = await answer(bot, "UMEERA", "what is waiting for me")
    assert "1 waiting for you, 0 you asked for waiting for others" in meera
    assert "Ravi Kumar asked for this card; it waits for you" in meera, meera
    ravi = await answer(bot, "URAVI", "my cards")
    assert "0 waiting for you, 1 you asked for waiting for others" in ravi
    assert "You asked for this card; it waits for Arjun Mehta or Meera Iyer" in ravi, ravi


async def test_withdraw_card_says_how_and_withdraws_nothing(bot: Bot) -> None:
    """ "withdraw card" is answered with how to withdraw (the card's own button, the asker
    only); the card stays live: the model has no way to end one."""
    await bot.mention("URAVI", "approve request 1")
    said = await answer(bot, "URAVI", "withdraw card")
    assert "press Withdraw on it" in said and "Only you can" in said
    live = await bot.card_store.pending_in(1, bot.clock())
    assert len(live) == 1


async def pending_list(bot: Bot, user: str) -> Message:
    """``user`` types ``/countersign pending`` in the channel; returns the private list."""
    url = bot.slack.response_url(to=(user, CHANNEL))
    body = urlencode(command(user, "pending", channel=CHANNEL, response_url=url))
    assert (await bot.post(body, "application/x-www-form-urlencoded")).status == 200
    await bot.settle()
    [listed] = [m for m in bot.slack.messages if m.ephemeral_to == user and m.blocks]
    return listed


async def test_a_pending_list_is_redrawn_decided_when_its_card_is_approved_elsewhere(
    bot: Bot,
) -> None:
    """Meera lists her cards, then approves Ravi's from her DM copy: the list just below is
    drawn again in place, the card shown approved and no button left on it (it kept live
    Approve/Edit/Reject, and pressing them was only refused)."""
    await bot.mention("URAVI", "approve request 1")
    [copy] = bot.cards(bot.dm("UMEERA"))
    listed = await pending_list(bot, "UMEERA")
    assert "card_approve" in str(listed.blocks)

    assert await bot.press("UMEERA", copy) == 200
    await bot.settle()

    assert listed.edited, "the list was not drawn again"
    now = bot.shown(listed)
    assert "card_" not in str(now.blocks)
    shown = said(now.blocks)
    assert shown.startswith("Approved and done") and "by Meera Iyer ·" in shown
    assert now.text == "No cards are waiting for you."
    validate(now.blocks)


async def test_a_pending_list_past_its_url_lifetime_is_left_and_logged(bot: Bot) -> None:
    """A list older than Slack's 30 minutes for its response_url is not sent to: the press
    is decided and its copies updated, and the skip is logged, not an error."""
    await bot.mention("URAVI", "approve request 1")
    [copy] = bot.cards(bot.dm("UMEERA"))
    listed = await pending_list(bot, "UMEERA")
    bot.clock.step(timedelta(minutes=31))
    sent = len(bot.slack.responses)

    with capture_logs() as logs:
        assert await bot.press("UMEERA", copy) == 200
        await bot.settle()

    assert "card_approve" not in str(bot.shown(copy).blocks)
    assert not listed.edited and len(bot.slack.responses) == sent
    assert any(e["event"] == "list_expired" for e in logs)
    assert not [e for e in logs if e["log_level"] == "error"]


async def test_a_used_up_pending_list_url_is_logged_and_skipped(bot: Bot) -> None:
    """Slack takes a response_url five times: once it refuses (``used_url``), the card is
    still decided and shown on its copies, and the refusal is only logged."""
    await bot.mention("URAVI", "approve request 1")
    [copy] = bot.cards(bot.dm("UMEERA"))
    listed = await pending_list(bot, "UMEERA")
    for name in bot.slack.response_targets:
        bot.slack.response_uses[name] = RESPONSE_USES

    with capture_logs() as logs:
        assert await bot.press("UMEERA", copy) == 200
        await bot.settle()

    assert "card_approve" not in str(bot.shown(copy).blocks)
    assert not listed.edited
    assert any(e["event"] == "list_url_refused" and e["status"] == 404 for e in logs)
    assert not [e for e in logs if e["log_level"] == "error"]


async def test_what_waits_says_in_words_who_asked_for_whom_and_until_when(bot: Bot) -> None:
    """Arjun's own card, asked about: "You asked for this card; it waits for you and expires
    …"; it read "· you · you · today at 6:15 PM", three bare values nobody could tell apart."""
    await bot.mention("UARJUN", "approve request 3")
    arjun = await answer(bot, "UARJUN", "what's waiting for me?")
    assert "Approve request 3" in arjun
    assert "You asked for this card; it waits for you and expires <!date^" in arjun, arjun
    assert "· you · you" not in arjun
    await bot.mention("URAVI", "approve request 1")
    meera = await answer(bot, "UMEERA", "what is waiting for me")
    assert "Ravi Kumar asked for this card; it waits for you and expires <!date^" in meera
