"""One running bot per test with Teams mounted: the real endpoint, a fake connector, the offline model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration

from bot.agent import Assistant
from bot.sandbox import WebApi as FakeSlack
from bot.server import application
from bot.surface import Surface
from tests.slack.conftest import (
    CARD_SECRET,
    RecordingAssistant,
    SteppedClock,
    bot_settings,
    slack,  # noqa: F401 (the same fake Slack workspace fixture, shared)
)
from tests.support.fake_connector import Call, FakeConnector, Member
from tests.support.teams_activities import CHANNEL, TENANT, invoke, message
from tools import CardSigner, Registry
from tools.connections import Platform
from tools.db import Database
from tools.directory import Directory
from tools.merchant import build_registry
from tools.merchant.demo import FIESTA

Json = dict[str, Any]

PRIYA = Member("29:1priya", "aad-0001-priya", "Priya Raman", "priya@fiesta.example")
ARJUN = Member("29:1arjun", "aad-0002-arjun", "Arjun Mehta", "arjun@fiesta.example")
MEERA = Member("29:1meera", "aad-0003-meera", "Meera Iyer", "meera@fiesta.example")
RAVI = Member("29:1ravi", "aad-0004-ravi", "Ravi Kumar", "ravi@fiesta.example")
STRANGER = Member("29:1stranger", "aad-0099-stranger", "Sam Stranger", "sam@elsewhere.example")
MEMBERS = (PRIYA, ARJUN, MEERA, RAVI, STRANGER)


@dataclass
class TeamsBot:
    """The bot under test, the connector it answers through, and ways to talk to it as Teams does."""

    connector: FakeConnector
    slack: FakeSlack
    server: TestServer
    http: aiohttp.ClientSession
    surface: Surface
    registry: Registry
    assistant: RecordingAssistant
    clock: SteppedClock

    async def post(
        self, activity: Json, *, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        """POSTs Activity JSON to /api/messages; returns the status and the JSON body (if any).

        A message's turn runs after the 202; this returns once the work it started is done.
        """
        url = self.server.make_url("/api/messages")
        async with self.http.post(url, json=activity, headers=headers or {}) as response:
            text = await response.text()
            body = await response.json() if text else None
        await self.surface.tasks.idle()
        return response.status, body

    async def say(self, member: Member, text: str, *, conversation: str = CHANNEL) -> int:
        activity = message(member, text, service_url=self.connector.url, conversation=conversation)
        status, _ = await self.post(activity)
        return status

    async def card_for(self, member: Member = ARJUN, text: str = "approve request 3") -> Call:
        """Asks for a card and returns the connector call that posted it."""
        before = len(self.connector.card_posts())
        assert await self.say(member, text) == 202
        posts = self.connector.card_posts()
        assert len(posts) == before + 1, self.connector.texts()
        return posts[-1]

    async def press(
        self, member: Member, verb: str, card: Call, *, reason: str | None = None
    ) -> tuple[int, Json]:
        """Presses a verb on the posted card as ``member``; returns the invoke response."""
        data = {**card.cards[0]["refresh"]["action"]["data"], "verb": verb}
        if reason is not None:
            data["reason"] = reason
        activity = invoke(
            member, verb, data, service_url=self.connector.url, reply_to=str(card.created)
        )
        status, body = await self.post(activity)
        return status, body

    async def refresh(self, member: Member, card: Call) -> Json:
        status, body = await self.press(member, "refresh", card)
        assert status == 200 and body["statusCode"] == 200, body
        return dict(body["value"])


@pytest.fixture
async def connector() -> AsyncIterator[FakeConnector]:
    fake = FakeConnector()
    for member in MEMBERS:
        fake.add(member)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def teams(
    db: Database,
    database_url: str,
    slack: FakeSlack,  # noqa: F811 (the fixture imported above)
    connector: FakeConnector,
) -> AsyncIterator[TeamsBot]:
    """Slack and Teams on one server; Teams' token check is anonymous (tests only)."""
    clock = SteppedClock()
    settings = bot_settings(slack, database_url)
    registry = build_registry(
        db, CardSigner([CARD_SECRET], ttl=timedelta(minutes=30), clock=clock), clock=clock
    )
    assistant = RecordingAssistant(Assistant(registry, settings))
    directory = Directory(db)
    # The tenant the activities come from is Fiesta Foods' connected Teams organisation.
    await directory.connections.connect(Platform.TEAMS, TENANT, FIESTA)
    surface = Surface(registry, assistant, directory)
    anonymous = AgentAuthConfiguration(anonymous_allowed=True)
    server = TestServer(application(settings, surface, teams_auth=anonymous), host="127.0.0.1")
    await server.start_server()
    async with aiohttp.ClientSession() as http:
        try:
            yield TeamsBot(connector, slack, server, http, surface, registry, assistant, clock)
        finally:
            await server.close()
