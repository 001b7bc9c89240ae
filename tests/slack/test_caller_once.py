"""Who a Slack request is from is found once per request, whatever its listener does with them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from bot.sandbox.payloads import block_action
from tests.slack.conftest import CHANNEL, Bot
from tests.support.slack_requests import command, view_submission


@pytest.fixture
def lookups(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Slack users the directory was asked to identify, one entry per lookup."""
    directory = bot.services.directory
    real = directory.identify
    asked: list[str] = []

    async def identify(platform: str, installation: str, user: str) -> Any:
        asked.append(user)
        return await real(platform, installation, user)

    monkeypatch.setattr(directory, "identify", identify)
    return asked


async def test_a_reject_finds_its_presser_once_per_request(bot: Bot, lookups: list[str]) -> None:
    """Arjun's Reject button and his reason modal's submission each look him up once, and the
    card is rejected."""
    await bot.mention("UARJUN", "approve request 3")
    card = bot.cards()[0]
    lookups.clear()
    await bot.press("UARJUN", card, action="card_reject")
    assert lookups == ["UARJUN"]
    view = bot.slack.called("views.open")[0]["view"]
    lookups.clear()
    assert await bot.interact(view_submission("UARJUN", view, reason="Budget")) == 200
    assert lookups == ["UARJUN"]
    assert bot.slack.message(CHANNEL, card.ts).blocks[0]["text"]["text"] == "Not approved"


async def test_an_approve_on_a_private_list_finds_its_presser_once(
    bot: Bot, lookups: list[str]
) -> None:
    """Arjun approves from his /countersign pending list: one lookup decides the press and
    draws the list again, now with nothing waiting."""
    await bot.mention("UARJUN", "approve request 3")
    url = bot.slack.response_url(to=("UARJUN", CHANNEL))
    body = urlencode(command("UARJUN", "pending", channel=CHANNEL, response_url=url))
    await bot.post(body, "application/x-www-form-urlencoded")
    await bot.settle()
    [listed] = [m for m in bot.slack.messages if m.ephemeral_to == "UARJUN" and m.blocks]
    block = next(b for b in listed.blocks if b["type"] == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == "card_approve")
    pressed = block_action(
        "UARJUN",
        action_id="card_approve",
        value=button["value"],
        block_id=block["block_id"],
        channel=CHANNEL,
        message_ts=listed.ts,
        response_url=bot.slack.response_url(to=("UARJUN", CHANNEL), replaces=(CHANNEL, listed.ts)),
        ephemeral=True,
    )
    lookups.clear()
    assert await bot.interact(pressed) == 200
    assert lookups == ["UARJUN"]
    assert listed.edited and listed.text == "No cards are waiting for you."
    assert bot.cards() == []  # the thread's card was decided: no buttons left on it


async def test_a_command_and_the_home_tab_find_their_person_once(
    bot: Bot, lookups: list[str]
) -> None:
    """`/countersign pending` and opening the App Home each look the person up once."""
    body = urlencode(
        command("UARJUN", "pending", channel=CHANNEL, response_url=bot.slack.response_url())
    )
    await bot.post(body, "application/x-www-form-urlencoded")
    await bot.settle()
    assert lookups == ["UARJUN"]
    lookups.clear()
    await bot.send(
        {"type": "app_home_opened", "user": "UARJUN", "channel": "D0ARJUN", "tab": "home"}
    )
    assert lookups == ["UARJUN"]
