"""The Reject reason's hint names who will see the reason, wherever the card was asked."""

from __future__ import annotations

from typing import Any

from bot.sandbox.payloads import message
from tests.slack.conftest import DM, Bot


def _hint(bot: Bot) -> str:
    views: list[dict[str, Any]] = [c["view"] for c in bot.slack.called("views.open")]
    [reason] = [b for b in views[-1]["blocks"] if b.get("type") == "input"]
    return str(reason["hint"]["text"])


async def test_a_channel_cards_hint_names_the_channel(bot: Bot) -> None:
    """Rejecting a card asked in #ops: the assistant and the channel will see the reason."""
    await bot.mention("UARJUN", "approve request 3")
    await bot.press("UARJUN", bot.cards()[0], action="card_reject")
    assert _hint(bot).endswith("The assistant and the channel will see it.")


async def test_a_dm_cards_hint_names_no_channel(bot: Bot) -> None:
    """In Arjun's DM with the app there is no channel: the hint said "the channel will see it";
    it now says the assistant and the person who asked will, on his card and on the managers'
    copies of a card Ravi asked for in his DM."""
    await bot.send(
        message("UARJUN", "approve request 3", channel=DM, ts=bot.ts(), channel_type="im")
    )
    await bot.press("UARJUN", bot.cards(DM)[0], action="card_reject")
    assert _hint(bot) == (
        "Leave it empty to reject without one. The assistant and the person who asked will see it."
    )
    ravi = bot.dm("URAVI")
    await bot.send(
        message("URAVI", "approve request 1", channel=ravi, ts=bot.ts(), channel_type="im")
    )
    await bot.press("UMEERA", bot.cards(bot.dm("UMEERA"))[-1], action="card_reject")
    assert "channel" not in _hint(bot) and "the person who asked" in _hint(bot)
