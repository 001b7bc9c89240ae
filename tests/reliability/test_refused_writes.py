"""A write the database refuses at execution: the card fails, shown on every copy, with why.

The toy tools reach the database with values no merchant tool lets through any more (those are
refused at proposal): a branch renamed to another branch's name, which both databases refuse
as a duplicate, and a stock count beyond the 32-bit column, which PostgreSQL refuses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox import BOT_TOKEN
from bot.sandbox import WebApi as FakeSlack
from bot.slack import SlackAdapter, Where
from bot.turns.answer import post_card
from tests.engine.toy import TOY_TOOLS
from tests.reliability.harness import CHANNEL, InProcessBot, in_process_bot
from tests.support.slack_requests import TEAM
from tools import CardStatus
from tools.db import Database
from tools.toolsets.merchant import DEFAULT_AGENT


@pytest.fixture
async def bot(db: Database, slack: FakeSlack) -> AsyncIterator[InProcessBot]:
    async with in_process_bot(db, slack) as running:
        for tool in TOY_TOOLS:
            if tool.name in ("rename_branch", "count_stock"):
                running.registry.register(tool)
        yield running


async def _press_toy(bot: InProcessBot, tool: str, args: dict[str, Any]) -> str:
    """Arjun's card for a toy write, posted in the channel and pressed; returns the card id."""
    arjun = await bot.services.directory.resolve("slack", TEAM, "UARJUN")
    assert arjun is not None
    result = await bot.registry.call(DEFAULT_AGENT, tool, args, arjun)
    assert result.proposal is not None
    client = AsyncWebClient(token=BOT_TOKEN, base_url=bot.slack.base_url, session=bot.http)
    adapter = SlackAdapter(client, Where(TEAM, "UARJUN", channel=CHANNEL))
    await post_card(
        bot.services, adapter, result.proposal, caller=arjun, conversation="c", installation=TEAM
    )
    [card] = bot.cards()
    assert await bot.press("UARJUN", card) == 200
    return result.proposal.card_id


def _shown_failed(bot: InProcessBot, reason: str) -> None:
    """The card in the channel is settled as failed with ``reason``, and its audit line posted."""
    [message] = [m for m in bot.slack.messages if m.channel == CHANNEL and not m.ephemeral_to][:1]
    shown = bot.slack.message(CHANNEL, message.ts)
    assert not any(b["type"] == "actions" for b in shown.blocks)
    assert "Approved, but it failed" in str(shown.blocks)
    assert reason in str(shown.blocks)
    audit = [m.text for m in bot.slack.messages if m.channel == CHANNEL and not m.ephemeral_to]
    assert any("Approved, but it failed (Arjun Mehta)" in text for text in audit), audit
    told = " ".join(bot.ephemerals("UARJUN"))
    assert "couldn't reach my database" not in told and "press again" not in told


async def test_a_write_the_database_refuses_fails_and_is_shown_failed(bot: InProcessBot) -> None:
    """Renaming a branch to another branch's name is refused by the database at the write: the
    card is failed, on every copy, saying why. It used to be told "I couldn't reach my database
    ... press again", with the card failed in the database but live in the channel forever."""
    card_id = await _press_toy(bot, "rename_branch", {"branch_id": 1, "name": "Koramangala"})
    record = await bot.registry.card(card_id)
    assert record is not None and record.status is CardStatus.FAILED
    assert record.outcome is not None and "refused" in record.outcome
    _shown_failed(bot, "it would repeat a value that must be unique")


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
async def test_a_value_the_column_cannot_hold_fails_and_is_shown_failed(bot: InProcessBot) -> None:
    """A stock count beyond the 32-bit column, refused by PostgreSQL at the write, fails the card
    with why; it was reported as the database being unreachable (the card live forever)."""
    card_id = await _press_toy(bot, "count_stock", {"stock_id": 1, "quantity": 2**40})
    record = await bot.registry.card(card_id)
    assert record is not None and record.status is CardStatus.FAILED
    _shown_failed(bot, "a value in it does not fit")
