"""The owner hears once, in her 1:1 chat with the bot, that a merchant's MCP server lists tools
she has not reviewed: a real stdio server, the real Teams endpoint and the fake connector."""

from __future__ import annotations

import pytest

from bot.presses.news import News
from bot.server import RUNTIME
from tests.mcp.conftest import connect
from tests.support.mcp_servers import HostileState
from tests.teams.conftest import PRIYA, TeamsBot
from tests.teams.test_mcp_chats import chat_id, fiesta_in_teams_only, writes_in_chat
from tools.db import Database
from tools.toolsets.mcp import McpTools, SourceClients
from tools.toolsets.merchant.demo import FIESTA

pytestmark = pytest.mark.slow

REVIEW = 'countersign mcp review "Fiesta Foods" odd'


def told(bot: TeamsBot) -> list[str]:
    """What the bot said in Priya's 1:1 chat about tools she has not reviewed."""
    posted = [c.body.get("text") or "" for c in bot.connector.in_conversation(chat_id(PRIYA))]
    return [text for text in posted if REVIEW in text]


async def test_the_owner_gets_one_message_in_her_chat(
    teams: TeamsBot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """Fiesta is in Teams only and Priya once wrote to the bot: when two tools appear on the odd
    server she gets one plain message naming them, and the next sweep sends nothing."""
    await fiesta_in_teams_only(teams)
    await writes_in_chat(teams, PRIYA)
    await connect(db, FIESTA, "odd", hostile_stdio, trust_annotations=True)
    mcp = McpTools(db, SourceClients(list_ttl=0), sources_ttl=0)
    reaches = list(teams.server.app[RUNTIME].mounted.values())
    try:
        for _ in range(10):  # the first listing: what the owner accepted on connecting it
            if await mcp.tools(FIESTA):
                break
        hostile_state.show_appearing(True)
        news = News(mcp)
        for _ in range(10):
            if await news.tell(teams.services, reaches):
                break
        assert await news.tell(teams.services, reaches) == 0
    finally:
        hostile_state.show_appearing(False)
        await mcp.aclose()

    [said] = told(teams)
    assert "appearing_lookup (the server marks it read-only)" in said
    assert "appearing_tool (the server marks it a write)" in said
