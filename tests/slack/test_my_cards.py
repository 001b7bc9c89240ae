"""Asking about cards in words, over /slack/events: "my cards", "what is waiting for me", "withdraw card"."""

from __future__ import annotations

from tests.slack.conftest import CHANNEL, Bot


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
    assert "Approve request 1" in meera and "· you · Ravi Kumar" in meera
    ravi = await answer(bot, "URAVI", "my cards")
    assert "0 waiting for you, 1 you asked for waiting for others" in ravi
    assert "Approve request 1" in ravi and "Arjun Mehta or Meera Iyer" in ravi


async def test_withdraw_card_says_how_and_withdraws_nothing(bot: Bot) -> None:
    """ "withdraw card" is answered with how to withdraw (the card's own button, the asker
    only); the card stays live: the model has no way to end one."""
    await bot.mention("URAVI", "approve request 1")
    said = await answer(bot, "URAVI", "withdraw card")
    assert "press Withdraw on it" in said and "Only you can" in said
    live = await bot.registry.cards.pending_in(1, bot.clock())
    assert len(live) == 1
