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
from pydantic_ai.models import Model

from bot.agent import Assistant
from bot.sandbox import WebApi as FakeSlack
from bot.server import application
from bot.services import Services
from bot.teams import TEAMS
from tests.slack.conftest import (
    CARD_SECRET,
    RecordingAssistant,
    SteppedClock,
    bot_settings,
    slack,  # noqa: F401 (the same fake Slack workspace fixture, shared)
)
from tests.support.fake_connector import Call, FakeConnector, Member
from tests.support.paced_model import paced_offline
from tests.support.teams_activities import CHANNEL, TENANT, invoke, message
from tests.support.teams_tokens import checker, token
from tools import AuditLog, CardSigner, CardStore, ProcessLease, Registry
from tools.db import Database
from tools.people.connections import Platform
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry
from tools.toolsets.merchant.demo import FIESTA

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
    services: Services
    registry: Registry
    assistant: RecordingAssistant
    clock: SteppedClock
    # Every request carries a Bot Connector token vouching for its activity's service URL,
    # checked by the bot (the local key stands in for Microsoft's); False: no token at all.
    signed: bool = False

    @property
    def card_store(self) -> CardStore:
        """The engine's card store, read straight from the database (the registry keeps its own)."""
        return CardStore(self.services.db)

    @property
    def audit(self) -> AuditLog:
        """The engine's audit log, read straight from the database."""
        return AuditLog(self.services.db)

    @property
    def signer(self) -> CardSigner:
        """A signer with the bot's secret and clock: it mints and reads the bot's tokens."""
        return CardSigner([CARD_SECRET], ttl=timedelta(minutes=30), clock=self.clock)

    async def post(
        self, activity: Json, *, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        """POSTs Activity JSON to /api/messages; returns the status and the JSON body (if any).

        A message's turn runs after the 202; this returns once the work it started is done.
        """
        url = self.server.make_url("/api/messages")
        if self.signed and headers is None:
            bearer = token(serviceurl=activity["serviceUrl"])
            headers = {"Authorization": f"Bearer {bearer}"}
        async with self.http.post(url, json=activity, headers=headers or {}) as response:
            text = await response.text()
            body = await response.json() if text else None
        await self.services.tasks.idle()
        return response.status, body

    async def say(
        self, member: Member, text: str, *, conversation: str = CHANNEL, personal: bool = False
    ) -> int:
        """``member`` writes ``text``: an @mention in a channel, or (``personal``) in their 1:1
        chat with the bot, ``conversation``."""
        activity = message(
            member,
            text,
            service_url=self.connector.url,
            conversation=conversation,
            personal=personal,
        )
        status, _ = await self.post(activity)
        return status

    async def card_for(self, member: Member = ARJUN, text: str = "approve request 3") -> Call:
        """Asks for a card in the channel and returns the connector call that posted it there."""

        def posts_here() -> list[Call]:
            return [c for c in self.connector.card_posts() if c.conversation == CHANNEL]

        before = len(posts_here())
        assert await self.say(member, text) == 202
        posts = posts_here()
        assert len(posts) == before + 1, self.connector.texts()
        return posts[-1]

    async def press(
        self,
        member: Member,
        verb: str,
        card: Call,
        *,
        reason: str | None = None,
        personal: bool = False,
    ) -> tuple[int, Json]:
        """Presses a verb on a card the bot sent (``personal``: in a 1:1 chat) as ``member``."""
        data = {**card_data(card.cards[0]), "verb": verb}
        if reason is not None:
            data["reason"] = reason
        activity = invoke(
            member,
            verb,
            data,
            service_url=self.connector.url,
            reply_to=str(card.created),
            conversation=card.conversation,
            personal=personal,
        )
        status, body = await self.post(activity)
        return status, body

    async def refresh(self, member: Member, card: Call, *, personal: bool = False) -> Json:
        status, body = await self.press(member, "refresh", card, personal=personal)
        assert status == 200 and body["statusCode"] == 200, body
        return dict(body["value"])


def card_data(card: Json) -> Json:
    """What a card's buttons carry (the card id and signed token), from its refresh or a button."""
    if "refresh" in card:
        return dict(card["refresh"]["action"]["data"])
    return dict(card["actions"][0]["data"])


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


async def running_bot(
    db: Database,
    database_url: str,
    slack: FakeSlack,  # noqa: F811 (the fixture imported above)
    connector: FakeConnector,
    *,
    signed: bool,
    model: Model | None = None,
    stream_interval: float | None = None,
) -> AsyncIterator[TeamsBot]:
    """One bot for a test: the offline model unless ``model``; a stream updated every
    ``stream_interval`` seconds when given (Teams' one second otherwise)."""
    clock = SteppedClock()
    settings = bot_settings(slack, database_url)
    lease = ProcessLease(db, clock=clock)
    registry = build_registry(
        db,
        CardSigner([CARD_SECRET], ttl=timedelta(minutes=30), clock=clock),
        clock=clock,
        lease=lease,
    )
    assistant = RecordingAssistant(Assistant(registry, db, settings, model=model))
    directory = Directory(db)
    # The tenant the activities come from is Fiesta Foods' connected Teams organisation.
    await directory.connections.connect(Platform.TEAMS, TENANT, FIESTA)
    connector.tenant = TENANT
    services = Services(registry, assistant, directory, db=db, lease=lease)
    # No app registration, so the SDK asks Microsoft for no tokens of its own (tests only).
    anonymous = AgentAuthConfiguration(anonymous_allowed=True)
    app = application(
        settings, services, teams_auth=anonymous, teams_tokens=checker() if signed else None
    )
    if stream_interval is not None:
        app[TEAMS].stream_interval = stream_interval
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    async with aiohttp.ClientSession() as http:
        try:
            yield TeamsBot(
                connector, slack, server, http, services, registry, assistant, clock, signed
            )
        finally:
            await server.close()


@pytest.fixture
async def teams(
    db: Database,
    database_url: str,
    slack: FakeSlack,  # noqa: F811 (the fixture imported above)
    connector: FakeConnector,
) -> AsyncIterator[TeamsBot]:
    """Slack and Teams on one server; Teams' token check is anonymous (tests only)."""
    async for bot in running_bot(db, database_url, slack, connector, signed=False):
        yield bot


@pytest.fixture
async def signed(
    db: Database,
    database_url: str,
    slack: FakeSlack,  # noqa: F811 (the fixture imported above)
    connector: FakeConnector,
) -> AsyncIterator[TeamsBot]:
    """Slack and Teams on one server; every Teams request carries a signed token the bot checks."""
    async for bot in running_bot(db, database_url, slack, connector, signed=True):
        yield bot


@pytest.fixture
async def streaming(
    db: Database,
    database_url: str,
    slack: FakeSlack,  # noqa: F811 (the fixture imported above)
    connector: FakeConnector,
) -> AsyncIterator[TeamsBot]:
    """As ``signed``, with a model that streams its words (the offline model's, word by word)
    and a stream updated every 50 ms instead of every second (a test takes well under one)."""
    model = paced_offline(pause=0.01)
    async for bot in running_bot(
        db, database_url, slack, connector, signed=True, model=model, stream_interval=0.05
    ):
        yield bot
