"""One running bot per test: the real aiohttp endpoint, the offline model, the sandbox's Slack Web API."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from pydantic import SecretStr
from slack_sdk.models.blocks import Block
from sqlalchemy import select

from bot.adapter import Steps, Stream
from bot.agent import Assistant
from bot.sandbox import BOT_TOKEN, Message, WebApi
from bot.sandbox.payloads import (
    TEAM,
    block_action,
    event,
    form,
    message,
    signed,
    view_submission,
)
from bot.server import RUNTIME, application
from bot.services import ModelReply, Services
from bot.settings import Settings
from bot.slack.blocks import APPROVE_VIEW, card_id_of_block
from tests.support.clock import SteppedClock
from tools import AuditLog, Caller, CardSigner, CardStore, ProcessLease, Registry
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.mcp import McpTools, SourceClients
from tools.toolsets.merchant import build_registry
from tools.toolsets.merchant.models import BranchRequest

SIGNING_SECRET = "slack-signing-secret-for-tests"
CARD_SECRET = "card-secret-for-slack-tests-0123456789"
CHANNEL = "C0OPS"
DM = "D0ARJUN"

# Slack user → (name, email). Ravi is staff; the stranger's email is nobody's in Countersign.
PEOPLE = {
    "UPRIYA": ("Priya Raman", "priya@fiesta.example"),
    "UARJUN": ("Arjun Mehta", "arjun@fiesta.example"),
    "UMEERA": ("Meera Iyer", "meera@fiesta.example"),
    "URAVI": ("Ravi Kumar", "ravi@fiesta.example"),
    "USTRANGER": ("Sam Stranger", "stranger@elsewhere.example"),
}
LINKED = ("UPRIYA", "UARJUN", "UMEERA", "URAVI")


class SlackWebApi(WebApi):
    """The sandbox's Web API, answering ``conversations.open`` with the person's DM with the app
    (refused, as for a deactivated account, for the users a test puts in ``closed``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.closed: set[str] = set()

    async def _conversations_open(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("users") or "")
        if user in self.closed:
            return {"ok": False, "error": "user_disabled"}
        dm = self.workspace.dm_of(user)
        if dm is None:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "channel": {"id": dm.id}}


class RecordingAssistant:
    """The real assistant, with every note it is told kept for the test to read."""

    def __init__(self, inner: Assistant) -> None:
        self.inner = inner
        self.notes: list[tuple[str, str]] = []

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> ModelReply:
        return await self.inner.reply(
            conversation=conversation, caller=caller, text=text, steps=steps, stream=stream
        )

    async def record(self, *, conversation: str, text: str) -> None:
        self.notes.append((conversation, text))
        await self.inner.record(conversation=conversation, text=text)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Bot:
    """The bot under test, the workspace it talks to, and ways to poke it as Slack would."""

    slack: WebApi
    server: TestServer
    http: aiohttp.ClientSession
    services: Services
    registry: Registry
    assistant: RecordingAssistant
    clock: SteppedClock
    # The merchants' MCP sources the registry lists (and the server's news sweep asks).
    mcp: McpTools
    _ts: int = 0

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

    def ts(self) -> str:
        self._ts += 1
        return f"1800000000.{self._ts:06d}"

    async def post(
        self,
        body: str,
        content_type: str,
        *,
        secret: str = SIGNING_SECRET,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> aiohttp.ClientResponse:
        sent = {
            **signed(body, secret, timestamp=timestamp, content_type=content_type),
            **(headers or {}),
        }
        async with self.http.post(
            self.server.make_url("/slack/events"), data=body.encode(), headers=sent
        ) as response:
            await response.read()
            return response

    async def send(
        self,
        inner: dict[str, Any],
        *,
        event_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> int:
        """Delivers one event and waits for the work it started; returns the HTTP status."""
        body = json.dumps(event(inner, event_id=event_id))
        response = await self.post(body, "application/json", headers=headers)
        await self.settle()
        return response.status

    async def interact(self, payload: dict[str, Any]) -> int:
        response = await self.post(form(payload), "application/x-www-form-urlencoded")
        await self.settle()
        return response.status

    async def answer(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Sends an interaction and returns the JSON the app answered it with ({} when empty)."""
        response = await self.post(form(payload), "application/x-www-form-urlencoded")
        await self.settle()
        assert response.status == 200
        text = (await response.text()).strip()
        return dict(json.loads(text)) if text else {}

    async def settle(self) -> None:
        """Waits until the work started by the last request (after its ack) has finished."""
        # Bolt runs the listeners before it answers, so the work they started is in the task
        # set by now; waiting for it to empty is a condition, not a guess at how long it takes.
        await self.services.tasks.idle()

    async def mention(self, user: str, text: str, *, channel: str = CHANNEL) -> str:
        """@mentions the bot at a channel's top level; returns the message ts (the thread)."""
        ts = self.ts()
        await self.send(
            message(user, f"<@UBOT> {text}", channel=channel, ts=ts, kind="app_mention")
        )
        return ts

    def cards(self, channel: str = CHANNEL) -> list[Message]:
        return [m for m in self.slack.messages if m.channel == channel and _actions(m.blocks)]

    async def press(
        self, user: str, card: Message, action: str = "card_approve", *, confirm: bool = True
    ) -> int:
        """Presses a button on a card as ``user``; and, where Approve on a channel's copy opened
        its confirm modal, presses "Yes, approve" in it (unless not ``confirm``)."""
        opened = len(self.slack.called("views.open"))
        status = await self.tap(user, card, action)
        views = self.slack.called("views.open")[opened:]
        asked = [v["view"] for v in views if v["view"].get("callback_id") == APPROVE_VIEW]
        if confirm and asked:
            return await self.interact(view_submission(user, asked[-1], values={}))
        return status

    async def tap(self, user: str, card: Message, action: str = "card_approve") -> int:
        """Presses a button on a card as ``user``, and nothing more."""
        block = _actions(card.blocks)[0]
        button = next(e for e in block["elements"] if e["action_id"] == action)
        payload = block_action(
            user,
            action_id=action,
            value=button["value"],
            block_id=block["block_id"],
            channel=card.channel,
            message_ts=card.ts,
            thread_ts=card.thread_ts,
        )
        return await self.interact(payload)

    def ephemerals(self, user: str) -> list[str]:
        return [m.text for m in self.slack.messages if m.ephemeral_to == user]

    def dm(self, user: str) -> str:
        """The channel of the app's DM with ``user`` (where private copies of cards go)."""
        found = self.slack.workspace.dm_of(user)
        assert found is not None, user
        return found.id

    def shown(self, card: Message) -> Message:
        """The card's message as it stands now (after any updates)."""
        return self.slack.message(card.channel, card.ts)

    def home(self, user: str) -> dict[str, Any]:
        """The App Home view last published for ``user``."""
        views = [c["view"] for c in self.slack.called("views.publish") if c["user_id"] == user]
        assert views, f"no App Home was published for {user}"
        return dict(views[-1])

    @property
    def mounted(self) -> dict[str, Any]:
        """The surfaces the running app mounted, as the sweeps take them."""
        return dict(self.server.app[RUNTIME].mounted)


def _actions(blocks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b.get("type") == "actions"]


def buttons(blocks: Sequence[dict[str, Any]]) -> list[str]:
    """The action ids of every button on a card (none once it is settled)."""
    return [e["action_id"] for b in _actions(blocks) for e in b["elements"]]


def card_id(card: Message) -> str:
    """The id of the card a message shows, read from its buttons' block id."""
    found = card_id_of_block(_actions(card.blocks)[0]["block_id"])
    assert found is not None
    return found


def said(blocks: Sequence[dict[str, Any]]) -> str:
    """Every text a card shows, in order, one per line (a rich_text block as ``rich_said``)."""
    out: list[str] = []
    for block in blocks:
        if block.get("type") == "rich_text":
            out.append(rich_said(block))
            continue
        texts = [block.get("text"), *(block.get("fields") or block.get("elements") or [])]
        out += [t["text"] for t in texts if isinstance(t, dict) and isinstance(t.get("text"), str)]
    return "\n".join(out)


def rich_said(block: dict[str, Any]) -> str:
    """A rich_text block's text as typed, with a time, a mention and an emoji written as the
    mrkdwn tokens Slack shows the same way (``<!date^…|…>``, ``<@U…>``, ``:name:``)."""
    out: list[str] = []
    for part in block["elements"]:
        for e in part["elements"]:
            if e["type"] == "text":
                out.append(e["text"])
            elif e["type"] == "date":
                out.append(f"<!date^{e['timestamp']}^{e['format']}|{e['fallback']}>")
            elif e["type"] == "user":
                out.append(f"<@{e['user_id']}>")
            elif e["type"] == "emoji":
                out.append(f":{e['name']}:")
    return "".join(out)


def approve_modals(bot: Bot) -> list[dict[str, Any]]:
    """Every confirm modal an Approve on a channel's copy opened, in order."""
    return [
        c["view"]
        for c in bot.slack.called("views.open")
        if c["view"]["callback_id"] == APPROVE_VIEW
    ]


def modal_said(view: dict[str, Any]) -> str:
    """Every text of a modal's blocks, in order, one per line."""
    return said(view["blocks"])


def validate(blocks: list[dict[str, Any]]) -> None:
    """Every block parses with slack_sdk's models and round-trips unchanged (limits included)."""
    for raw in blocks:
        parsed = Block.parse(raw)
        assert parsed is not None
        assert parsed.to_dict() == raw


async def request_status(bot: Bot, request_id: int) -> str:
    """A branch request's status as the shop's database holds it."""
    async with bot.services.db.session() as session:
        found = await session.scalar(
            select(BranchRequest.status).where(BranchRequest.id == request_id)
        )
    return str(found)


@asynccontextmanager
async def serving(fake: WebApi) -> AsyncIterator[WebApi]:
    """A fake Slack Web API (of any kind) with the demo people in it, served while the block runs."""
    for user, (name, email) in PEOPLE.items():
        fake.add_user(user, name, email)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


@pytest.fixture
async def slack() -> AsyncIterator[WebApi]:
    async with serving(SlackWebApi(team_id=TEAM)) as fake:
        yield fake


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


def bot_settings(slack: WebApi, database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": SecretStr(BOT_TOKEN),
        "slack_signing_secret": SecretStr(SIGNING_SECRET),
        "slack_app_token": None,
        "slack_client_id": None,
        "slack_client_secret": None,
        "countersign_secret": SecretStr(CARD_SECRET),
        "slack_api_url": slack.base_url,
        "database_url": database_url,
        "countersign_model": "offline",
        "countersign_audit_channel": None,
        # Tool lists never reused, so a test's switches on an MCP server show at once.
        "countersign_mcp_list_ttl": 0.0,
        **overrides,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
async def bot(
    db: Database,
    database_url: str,
    slack: WebApi,
    clock: SteppedClock,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Bot]:
    """The bot serving on loopback, with the demo people linked to their Slack users."""
    overrides = getattr(request, "param", {})
    settings = bot_settings(slack, database_url, **overrides)
    lease = ProcessLease(db, clock=clock)
    registry = build_registry(
        db,
        CardSigner([CARD_SECRET], ttl=timedelta(minutes=30), clock=clock),
        clock=clock,
        lease=lease,
    )
    # The merchants' own MCP servers, as the server adds them; none is connected unless a test
    # connects one.
    mcp = McpTools(db, SourceClients(list_ttl=settings.countersign_mcp_list_ttl))
    registry.add_source(mcp)
    directory = Directory(db)
    for user in LINKED:
        await directory.link("slack", TEAM, user, PEOPLE[user][1])
    assistant = RecordingAssistant(Assistant(registry, db, settings))
    services = Services(
        registry,
        assistant,
        directory,
        db=db,
        lease=lease,
        audit_channel=settings.countersign_audit_channel,
    )
    server = TestServer(application(settings, services, news=mcp), host="127.0.0.1")
    await server.start_server()
    async with aiohttp.ClientSession() as http:
        try:
            yield Bot(slack, server, http, services, registry, assistant, clock, mcp)
        finally:
            await server.close()
            await registry.aclose()
