"""A card asked for at /mcp reaches Teams people in their 1:1 chat with the bot, over signed
/api/messages and a real MCP client, once they have written to the bot there."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation
from sqlalchemy import select

from tests.support.fake_connector import Call, Member
from tests.support.teams_activities import TENANT, message
from tests.support.teams_tokens import token
from tests.teams.adaptive import actions
from tests.teams.conftest import ARJUN, MEERA, RAVI, TeamsBot, card_data
from tests.teams.test_invoke import request_status
from tools import McpTokens
from tools.db import AuditRow, TeamsChatRow
from tools.people.connections import Platform
from tools.toolsets.merchant.demo import FIESTA, HARBOR

# Fiesta Foods' people, as the demo numbers them.
ARJUN_ID, RAVI_ID = 2, 4
ELSEWHERE = "5b0e9a7d-0000-4000-8000-0000000e15e1"  # another merchant's tenant
Json = dict[str, Any]


def chat_id(member: Member, tenant: str = TENANT) -> str:
    return f"a:1{member.aad}-personal" + ("" if tenant == TENANT else f"-{tenant[:8]}")


def chat_message(bot: TeamsBot, member: Member, *, tenant: str = TENANT, **fields: Any) -> Json:
    """A message ``member`` writes to the bot in their 1:1 chat in ``tenant``, as Teams sends it."""
    activity = message(member, "hello", service_url=bot.connector.url)
    activity.pop("entities")
    conversation = {"id": chat_id(member, tenant), "conversationType": "personal"}
    return {
        **activity,
        "text": "hello",
        "conversation": {**conversation, "isGroup": False, "tenantId": tenant},
        "channelData": {"tenant": {"id": tenant}},
        **fields,
    }


async def writes_in_chat(bot: TeamsBot, member: Member, *, tenant: str = TENANT) -> None:
    """``member`` writes to the bot in their 1:1 chat in ``tenant``; Teams answers 202."""
    if tenant == TENANT:
        bot.connector.chats[member.aad] = chat_id(member)  # Teams opens this same chat for them
    status, _ = await bot.post(chat_message(bot, member, tenant=tenant))
    assert status == 202


async def kept(bot: TeamsBot) -> list[tuple[str, str]]:
    """The (tenant, AAD object id) of every 1:1 chat kept."""
    async with bot.services.db.session() as session:
        return [(r.tenant, r.aad) for r in await session.scalars(select(TeamsChatRow))]


async def fiesta_in_teams_only(bot: TeamsBot) -> None:
    """Fiesta Foods' sandbox Slack workspace disconnected: its people are in Teams only."""
    await bot.services.directory.connections.disconnect(Platform.SLACK, "T0FIESTA")


@asynccontextmanager
async def mcp_client(bot: TeamsBot, personid: int) -> AsyncIterator[Client]:
    """An MCP client of the official SDK at /mcp, with a token of ``personid``'s."""
    token, _ = await McpTokens(bot.services.db).create(FIESTA, personid, name="Laptop")
    # The SDK's 5 s default read timeout is shorter than a loaded machine's slowest answer.
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
    url = str(bot.server.make_url("/mcp"))
    async with (
        http,
        Client(
            streamable_http_client(url, http_client=http),
            client_info=Implementation(name="claude-desktop", version="1"),
        ) as client,
    ):
        yield client


def said(result: CallToolResult) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


def cards_in(bot: TeamsBot, conversation: str) -> list[Call]:
    return [
        c for c in bot.connector.in_conversation(conversation) if c.method == "POST" and c.cards
    ]


async def card_status(client: Client, card: str) -> dict[str, Any]:
    answer = await client.call_tool("card_status", {"card_id": card})
    assert not answer.is_error and answer.structured_content is not None, said(answer)
    return dict(answer.structured_content["rows"][0])


async def test_a_write_is_a_card_in_the_askers_chat_and_approve_runs_it_once(
    signed: TeamsBot,
) -> None:
    """Arjun, who wrote to the bot once in his 1:1 chat, asks at /mcp: the card is posted in
    that chat, his to approve; Approve there runs it once and card_status says done."""
    await fiesta_in_teams_only(signed)
    await writes_in_chat(signed, ARJUN)
    async with mcp_client(signed, ARJUN_ID) as client:
        answer = await client.call_tool("approve_request", {"request_id": 1})
        assert not answer.is_error, said(answer)
        assert said(answer).startswith("NOT done: Approve request 1 — ")
        assert ". Waiting for approval by Arjun Mehta in Teams. Card " in said(answer)
        assert answer.structured_content is not None
        card = answer.structured_content["card_id"]
        assert answer.structured_content["delivered_to"] == ["Arjun Mehta"]
        [posted] = cards_in(signed, chat_id(ARJUN))
        assert card_data(posted.cards[0])["card"] == card
        assert posted.cards[0]["refresh"]["userIds"] == [ARJUN.address]
        assert await request_status(signed, 1) == "pending"

        view = await signed.refresh(ARJUN, posted, personal=True)
        assert [a["verb"] for a in actions(view)][:1] == ["approve"]
        status, _ = await signed.press(ARJUN, "approve", posted, personal=True)
        assert status == 200
        again, _ = await signed.press(ARJUN, "approve", posted, personal=True)
        assert again == 200

        done = await card_status(client, card)
    assert await request_status(signed, 1) == "approved"
    assert done["status"] == "done" and done["decided_by"] == "Arjun Mehta"
    async with signed.services.db.session() as session:
        stmt = select(AuditRow.outcome).where(AuditRow.card_id == card)
        outcomes = list(await session.scalars(stmt))
    assert outcomes.count("done") == 1, outcomes
    # Shown decided in the chat it was posted in.
    assert any(u.activity_id == posted.created for u in signed.connector.updates())


async def test_a_person_never_seen_is_named_as_unreached(signed: TeamsBot) -> None:
    """Ravi (staff) asks at /mcp: the card is in his chat, Arjun (who wrote to the bot) gets a
    copy in his, and Meera, who never did, is named to the agent as not reached."""
    await fiesta_in_teams_only(signed)
    await writes_in_chat(signed, RAVI)
    await writes_in_chat(signed, ARJUN)
    async with mcp_client(signed, RAVI_ID) as client:
        answer = await client.call_tool("approve_request", {"request_id": 2})
    assert not answer.is_error, said(answer)
    assert answer.structured_content is not None
    assert answer.structured_content["waiting_for"] == ["Arjun Mehta", "Meera Iyer"]
    assert answer.structured_content["delivered_to"] == ["Arjun Mehta"]
    assert "Could not reach Meera Iyer" in said(answer)
    [his] = cards_in(signed, chat_id(RAVI))
    assert [a["verb"] for a in actions(his.cards[0])] == []  # his refreshed view has Withdraw
    [copy] = cards_in(signed, chat_id(ARJUN))
    assert [a["verb"] for a in actions(copy.cards[0])] == ["approve", "edit", "reject"]
    assert MEERA.aad not in {c.member for c in signed.connector.creations()}


async def test_a_chat_kept_in_another_tenant_is_never_used(signed: TeamsBot) -> None:
    """Arjun's only kept chat is in a tenant connected to Harbor Books: Fiesta's card for him
    is not posted there, and the agent is told he could not be reached."""
    await fiesta_in_teams_only(signed)
    await signed.services.directory.connections.connect(Platform.TEAMS, ELSEWHERE, HARBOR)
    await signed.services.directory.link("teams", TENANT, ARJUN.aad, ARJUN.email or "")
    await writes_in_chat(signed, ARJUN, tenant=ELSEWHERE)
    assert await kept(signed) == [(ELSEWHERE, ARJUN.aad)]
    before = len(signed.connector.calls)

    async with mcp_client(signed, ARJUN_ID) as client:
        answer = await client.call_tool("approve_request", {"request_id": 1})
    assert not answer.is_error, said(answer)
    assert answer.structured_content is not None
    assert answer.structured_content["delivered_to"] == []
    assert "Could not reach Arjun Mehta" in said(answer)
    assert signed.connector.calls[before:] == []


async def test_only_a_token_checked_activity_keeps_a_chat(signed: TeamsBot) -> None:
    """A message whose token vouches for another service URL is refused and keeps nothing;
    one from a tenant nobody connected keeps nothing either."""
    forged = chat_message(signed, ARJUN, serviceUrl="https://attacker.example/")
    bearer = token(serviceurl=signed.connector.url)
    status, _ = await signed.post(forged, headers={"Authorization": f"Bearer {bearer}"})
    assert status == 401
    await writes_in_chat(signed, ARJUN, tenant=ELSEWHERE)  # not connected to any merchant
    assert await kept(signed) == []


async def test_installing_the_app_keeps_the_chat_and_removing_it_forgets_it(
    signed: TeamsBot,
) -> None:
    """Arjun adds the app for himself (Teams says so in his new 1:1 chat): his chat is kept
    before he writes anything; he removes it: the chat is forgotten."""

    def installation(action: str) -> Json:
        update = chat_message(signed, ARJUN, type="installationUpdate", action=action)
        del update["text"], update["textFormat"]
        return update

    status, _ = await signed.post(installation("add"))
    assert status in (200, 202)
    assert await kept(signed) == [(TENANT, ARJUN.aad)]
    status, _ = await signed.post(installation("remove"))
    assert status in (200, 202)
    assert await kept(signed) == []
