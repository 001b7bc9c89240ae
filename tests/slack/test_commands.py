"""The /countersign slash command and the App Home: help and the person's own pending cards."""

from __future__ import annotations

from urllib.parse import urlencode

from tests.slack.conftest import CHANNEL, Bot
from tests.support.slack_requests import command, event


async def slash(bot: Bot, user: str, text: str) -> int:
    body = urlencode(command(user, text, channel=CHANNEL, response_url=bot.slack.response_url()))
    response = await bot.post(body, "application/x-www-form-urlencoded")
    await bot.settle()
    return response.status


async def test_help_is_private(bot: Bot) -> None:
    """`/countersign help` answers only the person who asked (ephemeral, via response_url)."""
    assert await slash(bot, "URAVI", "help") == 200
    assert len(bot.slack.responses) == 1
    answer = bot.slack.responses[0]
    assert answer["response_type"] == "ephemeral"
    assert "/countersign pending" in answer["text"]
    assert bot.slack.called("chat.postMessage") == []


async def test_pending_lists_only_my_cards_with_buttons(bot: Bot) -> None:
    """`/countersign pending` shows Arjun his waiting card, with its buttons, and not Meera's."""
    await bot.mention("UARJUN", "approve request 3")
    await bot.mention("UMEERA", "approve request 4")
    await slash(bot, "UARJUN", "pending")
    answer = bot.slack.responses[-1]
    assert answer["response_type"] == "ephemeral"
    assert answer["text"] == "1 approval card is waiting for you."
    actions = [b for b in answer["blocks"] if b["type"] == "actions"]
    assert len(actions) == 1
    assert "#3" in str(answer["blocks"]) or "request 3" in str(answer["blocks"]).lower()


async def test_unlinked_person_sees_no_cards(bot: Bot) -> None:
    """A stranger asking for pending cards is told how to get access."""
    await slash(bot, "USTRANGER", "pending")
    assert "don't know who you are" in bot.slack.responses[-1]["text"]


async def test_app_home_shows_my_pending_cards(bot: Bot) -> None:
    """Opening the App Home publishes an intro and the person's waiting cards with buttons."""
    await bot.mention("UARJUN", "approve request 3")
    await bot.send(
        {"type": "app_home_opened", "user": "UARJUN", "channel": "D0ARJUN", "tab": "home"}
    )
    published = bot.slack.called("views.publish")
    assert [p["user_id"] for p in published] == ["UARJUN"]
    view = published[0]["view"]
    assert view["type"] == "home"
    assert "Nothing changes until you press" in view["blocks"][0]["text"]["text"]
    assert [b for b in view["blocks"] if b["type"] == "actions"]


async def test_approve_from_app_home_updates_the_channel_card(bot: Bot) -> None:
    """A press in the App Home approves the card and updates it where it was posted."""
    from tests.support.slack_requests import block_action

    await bot.mention("UARJUN", "approve request 3")
    card = bot.cards()[0]
    await bot.send(event({"type": "app_home_opened", "user": "UARJUN", "tab": "home"})["event"])
    home = bot.slack.called("views.publish")[-1]["view"]
    block = next(b for b in home["blocks"] if b["type"] == "actions")
    payload = block_action(
        "UARJUN",
        action_id="card_approve",
        value=block["elements"][0]["value"],
        block_id=block["block_id"],
        channel="",
        message_ts="",
    )
    payload["container"] = {"type": "view", "view_id": "V1"}
    payload.pop("channel")
    await bot.interact(payload)
    assert bot.slack.message(CHANNEL, card.ts).blocks[0]["text"]["text"] == "Approved and done"
    assert len(bot.slack.called("views.publish")) == 2
