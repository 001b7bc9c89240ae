"""The owner hears once, in a DM from the app, that a merchant's MCP server lists tools they have
not reviewed: over the real bolt endpoint, a real stdio server and the fake Slack Web API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import delete
from structlog.testing import capture_logs

from bot.presses.news import News
from bot.sandbox import Message
from bot.server import RUNTIME
from tests.mcp.conftest import connect
from tests.slack.conftest import Bot
from tests.support.mcp_servers import HostileState
from tools.db import Database
from tools.people.tables import Identity
from tools.toolsets.merchant.demo import FIESTA

pytestmark = pytest.mark.slow

REVIEW = 'countersign mcp review "Fiesta Foods" odd'


def told(bot: Bot, user: str = "UPRIYA") -> list[Message]:
    """What the app said in ``user``'s DM about tools they have not reviewed."""
    return [m for m in bot.slack.messages if m.channel == bot.dm(user) and REVIEW in m.text]


async def listed_once(bot: Bot) -> None:
    """A turn lists the odd server, which records its tools as the ones the owner accepted."""
    for _ in range(10):  # a stdio server starting on a busy machine may miss a turn's budget
        offered = await bot.registry.offered(bot.registry.default_agent, FIESTA)
        if any(t.name.startswith("odd__") for t in offered):
            return
    raise AssertionError("the odd server never listed its tools")


async def sweep_until_told(bot: Bot, news: News) -> int:
    """Sweeps until the owner is told (the server lists its new tools within a few listings)."""
    sent = 0
    for _ in range(10):
        sent = await news.tell(bot.services, list(bot.mounted.values()))
        if sent:
            break
    return sent


@pytest.fixture
async def odd(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> AsyncIterator[HostileState]:
    """Fiesta's trusted odd server, listed once; then two tools appear on it."""
    await connect(db, FIESTA, "odd", hostile_stdio, trust_annotations=True)
    await listed_once(bot)
    hostile_state.show_appearing(True)
    try:
        yield hostile_state
    finally:
        hostile_state.show_appearing(False)


async def test_the_owner_gets_one_dm_naming_the_new_tools(bot: Bot, odd: HostileState) -> None:
    """appearing_lookup and appearing_tool appear on the odd server: Priya, the owner, gets one
    DM naming each with what the server marks it as and the command that reviews them; the
    next sweep sends nothing, and no one else is told."""
    news = News(bot.mcp)

    assert await sweep_until_told(bot, news) == 1

    [dm] = told(bot)
    shown = "".join(
        e.get("text", "") for b in dm.blocks for p in b["elements"] for e in p["elements"]
    )
    assert "appearing_lookup (the server marks it read-only)" in shown
    assert "appearing_tool (the server marks it a write)" in shown
    assert REVIEW in shown
    assert await news.tell(bot.services, list(bot.mounted.values())) == 0
    assert len(told(bot)) == 1
    assert [u for u in ("UARJUN", "UMEERA", "URAVI") if told(bot, u)] == []


@pytest.mark.parametrize("bot", [{"countersign_reconcile_after": 5}], indirect=True)
async def test_the_running_server_tells_the_owner_once(bot: Bot, odd: HostileState) -> None:
    """Nobody writes or sweeps by hand: the server's own sweep tells Priya, once, within a few
    of its rounds, and the rounds after it tell her nothing more."""
    beat = bot.server.app[RUNTIME].services.lease.beat_every.total_seconds()
    for _ in range(40):
        if told(bot):
            break
        await asyncio.sleep(beat / 2)
    assert len(told(bot)) == 1
    await asyncio.sleep(beat * 3)
    assert len(told(bot)) == 1


async def test_a_merchant_with_no_owner_in_chat_is_logged_once(bot: Bot, odd: HostileState) -> None:
    """Priya has no Slack identity and no Slack user has her email: nothing is sent, one info
    event names the tools, and the next sweep logs nothing more."""
    bot.slack.workspace.users["UPRIYA"].email = "priya@elsewhere.example"
    async with bot.services.db.session(write=True) as session:
        await session.execute(delete(Identity).where(Identity.platform_user_id == "UPRIYA"))
        await session.commit()
    news = News(bot.mcp)
    with capture_logs() as logs:
        for _ in range(10):
            await news.tell(bot.services, list(bot.mounted.values()))
            if any(e["event"] == "mcp_news_unreached" for e in logs):
                break
        await news.tell(bot.services, list(bot.mounted.values()))
    assert told(bot) == []
    [event] = [e for e in logs if e["event"] == "mcp_news_unreached"]
    assert event["log_level"] == "info"
    assert event["tools"] == ["appearing_lookup", "appearing_tool"]
