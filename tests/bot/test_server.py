"""The composition root mounts only what is configured: Slack-only, Teams-only, both, or nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from pydantic import SecretStr

from bot.agent import Assistant
from bot.server import application, build_services
from bot.services import Services
from bot.settings import Settings, SettingsError
from tools import CardSigner, ProcessLease
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry

CARD_SECRET = "card-secret-for-server-tests-0123456789"
APP_ID = "00000000-0000-0000-0000-00000000b07a"


def settings(database_url: str, **values: Any) -> Settings:
    """Settings from these values alone: no .env, nothing else configured."""
    empty: dict[str, Any] = {
        "slack_bot_token": None,
        "slack_signing_secret": None,
        "slack_app_token": None,
        "slack_client_id": None,
        "slack_client_secret": None,
        "microsoft_app_id": None,
        "microsoft_app_password": None,
        "microsoft_app_tenant_id": None,
        "countersign_secret": SecretStr(CARD_SECRET),
        "database_url": database_url,
    }
    return Settings(_env_file=None, **{**empty, **values})  # type: ignore[call-arg]


TEAMS_ONLY = {"microsoft_app_id": APP_ID, "microsoft_app_password": SecretStr("not-a-secret")}
SLACK_ONLY = {
    "slack_bot_token": SecretStr("xoxb-not-used"),
    "slack_signing_secret": SecretStr("signing-secret-not-used"),
    "slack_api_url": "http://127.0.0.1:1/api/",
}


def services_over(db: Database, configured: Settings) -> Services:
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([CARD_SECRET]), lease=lease)
    return Services(
        registry, Assistant(registry, db, configured), Directory(db), db=db, lease=lease
    )


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _status(http: aiohttp.ClientSession, server: TestServer, method: str, path: str) -> int:
    async with http.request(method, server.make_url(path), json={"type": "message"}) as response:
        return response.status


async def _serving(db: Database, configured: Settings) -> TestServer:
    server = TestServer(application(configured, services_over(db, configured)), host="127.0.0.1")
    await server.start_server()
    return server


async def test_teams_only_serves_health_and_refuses_unsigned_activities(
    db: Database, database_url: str, http: aiohttp.ClientSession
) -> None:
    """With only the Teams app registration: /healthz is 200, an unsigned activity 401, no Slack route."""
    server = await _serving(db, settings(database_url, **TEAMS_ONLY))
    try:
        assert await _status(http, server, "GET", "/healthz") == 200
        assert await _status(http, server, "POST", "/api/messages") == 401
        assert await _status(http, server, "POST", "/slack/events") == 404
    finally:
        await server.close()


async def test_slack_only_serves_slack_and_no_teams_route(
    db: Database, database_url: str, http: aiohttp.ClientSession
) -> None:
    """With only Slack settings: /healthz is 200, an unsigned Slack request 401, no Teams route."""
    server = await _serving(db, settings(database_url, **SLACK_ONLY))
    try:
        assert await _status(http, server, "GET", "/healthz") == 200
        assert await _status(http, server, "POST", "/slack/events") == 401
        assert await _status(http, server, "POST", "/api/messages") == 404
    finally:
        await server.close()


async def test_nothing_configured_is_refused_naming_the_variables(
    db: Database, database_url: str
) -> None:
    """With neither surface configured the app is not built; the message names what to set."""
    configured = settings(database_url)
    with pytest.raises(SettingsError, match=r"SLACK_BOT_TOKEN.*MICROSOFT_APP_ID"):
        application(configured, services_over(db, configured))


async def test_metrics_answer_on_loopback_with_the_lane_gauges(
    db: Database, database_url: str, http: aiohttp.ClientSession
) -> None:
    """The real app serves /metrics to this machine with every lane's gauges; a proxied ask is 403."""
    server = await _serving(db, settings(database_url, **SLACK_ONLY))
    try:
        async with http.get(server.make_url("/metrics")) as response:
            assert response.status == 200
            body = await response.text()
        for lane in ("press", "turn", "typing", "chores"):
            assert f'countersign_lane_waiting{{lane="{lane}"}} 0.0' in body
            assert f'countersign_lane_running{{lane="{lane}"}}' in body
        assert 'countersign_cards{status="pending"}' in body
        assert "countersign_press_seconds" in body
        assert "countersign_turn_seconds" in body
        proxied = {"X-Forwarded-For": "203.0.113.9"}
        async with http.get(server.make_url("/metrics"), headers=proxied) as response:
            assert response.status == 403
    finally:
        await server.close()


async def test_metrics_token_lets_an_operator_in_from_anywhere(
    db: Database, database_url: str, http: aiohttp.ClientSession
) -> None:
    """With COUNTERSIGN_METRICS_TOKEN set, /metrics wants that bearer token, even on loopback."""
    configured = settings(
        database_url, countersign_metrics_token=SecretStr("metrics-token-0123"), **SLACK_ONLY
    )
    server = await _serving(db, configured)
    try:
        async with http.get(server.make_url("/metrics")) as response:
            assert response.status == 403
        bearer = {"Authorization": "Bearer metrics-token-0123"}
        async with http.get(server.make_url("/metrics"), headers=bearer) as response:
            assert response.status == 200
            assert 'countersign_lane_running{lane="press"}' in await response.text()
    finally:
        await server.close()


async def test_typing_delay_is_a_setting_of_the_production_surface(
    db: Database, database_url: str
) -> None:
    """COUNTERSIGN_TYPING_AFTER sets how long a message waits before it is shown typing."""
    configured = settings(database_url, countersign_typing_after=2.5)
    assert build_services(configured, db).typing_after == 2.5
    assert build_services(settings(database_url), db).typing_after == 1.0
