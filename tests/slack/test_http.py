"""The HTTP edge: signatures are checked before anything runs, and /healthz reports the database."""

from __future__ import annotations

import json
import time

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from bot.agent import Assistant
from bot.sandbox import WebApi
from bot.server import application
from bot.services import Services
from tests.slack.conftest import (
    CARD_SECRET,
    CHANNEL,
    SIGNING_SECRET,
    Bot,
    RecordingAssistant,
    bot_settings,
)
from tests.support.slack_requests import event, message, signed
from tools import CardSigner, ProcessLease
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry


def mention_body(bot: Bot) -> str:
    return json.dumps(
        event(
            message("UARJUN", "<@UBOT> branches", channel=CHANNEL, ts=bot.ts(), kind="app_mention")
        )
    )


async def test_bad_signature_is_401(bot: Bot) -> None:
    """A request signed with another secret is refused with 401 and nothing is answered."""
    response = await bot.post(
        mention_body(bot), "application/json", secret="not-the-signing-secret"
    )
    await bot.settle()
    assert response.status == 401
    assert bot.slack.calls == []


async def test_stale_signature_is_401(bot: Bot) -> None:
    """A correctly signed request older than five minutes (a replay) is refused with 401."""
    response = await bot.post(
        mention_body(bot), "application/json", timestamp=int(time.time()) - 600
    )
    assert response.status == 401


async def test_unsigned_request_is_401(bot: Bot) -> None:
    """A request without Slack's signature headers is refused with 401."""
    async with bot.http.post(
        bot.server.make_url("/slack/events"),
        data=mention_body(bot),
        headers={"Content-Type": "application/json"},
    ) as response:
        assert response.status == 401


@pytest.mark.parametrize("timestamp", ["abc", "", "1e9", "١٧٠٠٠٠٠٠٠٠", "9" * 5000])
async def test_unreadable_timestamp_is_401(bot: Bot, timestamp: str) -> None:
    """A request whose timestamp header is not a number of seconds is 401, not a 500 with a
    traceback: bolt's signature check read it with int(), so anyone could fill the log."""
    body = mention_body(bot)
    headers = {**signed(body, SIGNING_SECRET, content_type="application/json")}
    headers["X-Slack-Request-Timestamp"] = timestamp
    async with bot.http.post(
        bot.server.make_url("/slack/events"), data=body, headers=headers
    ) as response:
        assert response.status == 401
    await bot.settle()
    assert bot.slack.calls == []


async def test_url_verification_is_answered(bot: Bot) -> None:
    """Slack's URL check (a signed challenge) is echoed back."""
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "unused"})
    response = await bot.post(body, "application/json")
    assert response.status == 200


async def test_healthz_reports_the_database(bot: Bot) -> None:
    """GET /healthz is 200 while the database answers."""
    async with bot.http.get(bot.server.make_url("/healthz")) as response:
        assert response.status == 200
        assert (await response.json())["database"] == "ok"


async def test_healthz_is_503_when_the_database_is_down(slack: WebApi) -> None:
    """GET /healthz is 503 when the database cannot be reached (nothing listens on port 1)."""
    db = Database("postgresql+asyncpg://nobody@127.0.0.1:1/countersign")
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([CARD_SECRET]), lease=lease)
    settings = bot_settings(slack, str(db.url))
    services = Services(
        registry,
        RecordingAssistant(Assistant(registry, db, settings)),
        Directory(db),
        db=db,
        lease=lease,
    )
    server = TestServer(application(settings, services), host="127.0.0.1")
    await server.start_server()
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(server.make_url("/healthz")) as response,
        ):
            assert response.status == 503
            assert (await response.json())["database"] == "unreachable"
    finally:
        await server.close()
        await db.dispose()
