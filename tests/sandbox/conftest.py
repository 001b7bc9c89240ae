"""The sandbox wired to the real bot: its Web API, people acting, and the bot's real HTTP endpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from pydantic import SecretStr

from bot.agent import Assistant
from bot.sandbox import BOT_TOKEN, Acting, Delivery, Message, WebApi, demo_workspace
from bot.sandbox.delivery import Answer
from bot.sandbox.page import add_page_routes
from bot.server import application
from bot.services import Services
from bot.settings import Settings
from tools import CardSigner, ProcessLease, Registry
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry

SECRET = "sandbox-signing-secret-for-tests"
CARD_SECRET = "card-secret-for-sandbox-tests-0123456789"


@dataclass
class Stack:
    """The sandbox (Web API and page on one server) and the bot, both on loopback."""

    api: WebApi
    acting: Acting
    services: Services
    registry: Registry
    page: TestServer
    bot: TestServer

    async def settle(self) -> None:
        """Waits until deliveries and the work they started in the bot have finished."""
        # A delivery returns once the bot has answered it, and bolt runs the listeners (which
        # hand their work to the task set) before answering: both waits are on conditions.
        for _ in range(2):
            await self.acting.drain()
            await self.services.tasks.idle()

    def cards(self, channel: str) -> list[Message]:
        return [m for m in self.api.messages if m.channel == channel and _actions(m)]

    async def approve(self, user: str, **where: Any) -> Answer:
        """``user`` presses Approve on a card's message (``where``: its block, channel, ts) and,
        on a channel's card, "Yes, approve" in the confirm modal it opens."""
        outcome = await self.acting.press(user, action_id="card_approve", **where)
        await self.settle()
        if outcome.ok and user in self.api.workspace.modals:
            outcome = await self.acting.submit(user, {})
            await self.settle()
        return outcome


def _actions(message: Message) -> list[dict[str, Any]]:
    return [b for b in message.blocks if b.get("type") == "actions"]


def settings_for(api_url: str, database_url: str) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": SecretStr(BOT_TOKEN),
        "slack_signing_secret": SecretStr(SECRET),
        "slack_app_token": None,
        "slack_client_id": None,
        "slack_client_secret": None,
        "countersign_secret": SecretStr(CARD_SECRET),
        "slack_api_url": api_url,
        "database_url": database_url,
        "countersign_model": "offline",
        "countersign_audit_channel": None,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.fixture
async def stack(db: Database, database_url: str) -> AsyncIterator[Stack]:
    """The demo workspace and the bot; nobody is linked beforehand (the bot links by email)."""
    api = WebApi(demo_workspace())
    page_app = web.Application()
    api.routes(page_app)
    delivery = Delivery("http://127.0.0.1:9/unset", SECRET, timeout=5.0, retry_delays=(0.0, 0.0))
    acting = Acting(api, delivery)
    add_page_routes(page_app, acting)
    page = TestServer(page_app, host="127.0.0.1")
    await page.start_server()
    api.url = str(page.make_url("")).rstrip("/")
    settings = settings_for(api.base_url, database_url)
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([CARD_SECRET], ttl=timedelta(minutes=30)), lease=lease)
    services = Services(
        registry, Assistant(registry, db, settings), Directory(db), db=db, lease=lease
    )
    bot = TestServer(application(settings, services), host="127.0.0.1")
    await bot.start_server()
    delivery.url = str(bot.make_url("/slack/events"))
    try:
        yield Stack(api, acting, services, registry, page, bot)
    finally:
        await acting.drain()
        await delivery.close()
        await bot.close()
        await page.close()


@pytest.fixture
async def page() -> AsyncIterator[tuple[WebApi, TestServer]]:
    """The Web API and the page on one loopback server, with no bot behind them."""
    api = WebApi(demo_workspace())
    app = web.Application()
    api.routes(app)
    acting = Acting(api, Delivery("http://127.0.0.1:9/none", "secret", retry_delays=()))
    add_page_routes(app, acting)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    api.url = str(server.make_url("")).rstrip("/")
    try:
        yield api, server
    finally:
        await acting.delivery.close()
        await server.close()
