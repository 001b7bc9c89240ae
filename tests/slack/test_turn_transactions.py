"""How many database transactions one answered message costs: the turn path stays lean."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from tests.slack.conftest import DM, Bot
from tests.support.slack_requests import message


@contextmanager
def counted(bot: Bot) -> Iterator[list[int]]:
    """Counts the transactions begun on the bot's engine while the block runs."""
    seen = [0]
    engine = bot.services.db.engine.sync_engine

    def began(conn: Any) -> None:
        seen[0] += 1

    event.listen(engine, "begin", began)
    try:
        yield seen
    finally:
        event.remove(engine, "begin", began)


async def test_mention_claims_and_identifies_in_one_transaction(bot: Bot) -> None:
    """A mention by a linked person: receipts, identity and thread mark in one transaction."""
    await bot.mention("UARJUN", "branches")  # warm: the conversation and caches exist
    with counted(bot) as seen:
        await bot.mention("UARJUN", "branches")
    # The message kept before its ack (``bot.runtime.inbox``), receipts + identity + mark, the
    # thread's turn taken, history read, the tool call with its audit row, the answer marked,
    # history save, the turn handed on. In a burst the first and the eighth are shared by the
    # messages of the moment.
    assert seen[0] == 9


async def test_dm_claims_and_identifies_in_one_transaction(bot: Bot) -> None:
    """A DM by a linked person: its receipts and the sender's identity in one transaction."""
    await bot.send(message("UARJUN", "branches", channel=DM, ts=bot.ts(), channel_type="im"))
    with counted(bot) as seen:
        await bot.send(message("UARJUN", "branches", channel=DM, ts=bot.ts(), channel_type="im"))
    assert seen[0] == 9
