"""/mcp as an HTTP endpoint: whose Host and Origin it answers, which methods, any header value."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import httpx2
import pytest
import structlog
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from bot.settings import SettingsError, load_settings
from tests.slack.conftest import Bot
from tools import McpTokens
from tools.db import Database

pytestmark = pytest.mark.slow

ARJUN = 2
PUBLIC = "https://countersign.example.com"
# A stateless request of the protocol before 2026-07-28, as an older client sends it: the
# SDK answers it without any handshake, so one POST is a whole tools/call.
_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-06-18",
}
_WRITE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "approve_request", "arguments": {"request_id": 1}},
}
_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


async def _token(db: Database) -> str:
    text, _ = await McpTokens(db).create(1, ARJUN, name="Laptop")
    return text


async def _post(
    bot: Bot, token: str, body: dict[str, Any], **headers: str
) -> tuple[int, str, dict[str, str]]:
    sent = {**_HEADERS, "Authorization": f"Bearer {token}", **headers}
    async with bot.http.post(
        bot.server.make_url("/mcp"),
        data=json.dumps(body),
        headers=sent,
        timeout=aiohttp.ClientTimeout(total=30),
    ) as response:
        return response.status, await response.text(), dict(response.headers)


@asynccontextmanager
async def _client(bot: Bot, token: str, **headers: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **headers}, timeout=30.0)
    async with (
        http,
        Client(
            streamable_http_client(str(bot.server.make_url("/mcp")), http_client=http),
            client_info=Implementation(name="claude-desktop", version="1"),
        ) as client,
    ):
        yield client


def _port(bot: Bot) -> int:
    assert bot.server.port is not None
    return bot.server.port


async def test_a_foreign_origin_is_refused_403_and_no_card_is_made(bot: Bot, db: Database) -> None:
    """A web page elsewhere (Origin http://evil.example) driving a browser that holds a token:
    the list and the write both get 403 naming the Origin, and no card exists anywhere; the
    same token with no Origin, as a non-browser client sends it, still lists the tools."""
    token = await _token(db)
    listed = await _post(bot, token, _LIST, Origin="http://evil.example")
    wrote = await _post(bot, token, _WRITE, Origin="http://evil.example")

    assert listed[0] == 403, listed
    assert wrote[0] == 403, wrote
    assert "http://evil.example" in wrote[1]
    assert "COUNTERSIGN_PUBLIC_URL" in wrote[1]
    assert list(await bot.card_store.rows()) == []
    assert bot.cards(bot.dm("UARJUN")) == []
    async with _client(bot, token) as client:
        assert "approve_request" in {t.name for t in (await client.list_tools()).tools}


async def test_a_foreign_host_is_refused_421(bot: Bot, db: Database) -> None:
    """A request naming another host (a DNS name rebound to this machine) gets 421 and runs
    nothing, token or not."""
    token = await _token(db)
    status, text, _ = await _post(bot, token, _WRITE, Host="evil.example")
    assert status == 421, text
    assert "evil.example" in text
    assert list(await bot.card_store.rows()) == []


async def test_loopback_origins_of_the_serving_port_are_served(bot: Bot, db: Database) -> None:
    """With no public URL set, a page of this very server (http://localhost:<its port>) is
    served; the same name on another port is not."""
    token = await _token(db)
    port = _port(bot)
    async with _client(bot, token, Origin=f"http://localhost:{port}") as client:
        assert (await client.call_tool("list_branches", {})).is_error is False
    status, text, _ = await _post(bot, token, _LIST, Origin=f"http://localhost:{port + 1}")
    assert status == 403, text


@pytest.mark.parametrize("bot", [{"countersign_public_url": PUBLIC}], indirect=True)
async def test_the_public_urls_host_and_origin_are_served_and_lookalikes_are_not(
    bot: Bot, db: Database
) -> None:
    """COUNTERSIGN_PUBLIC_URL names the address people reach: its Host and Origin are served
    (a write becomes a card), while an Origin that only starts like it gets 403 and a Host
    that only ends like it gets 421."""
    token = await _token(db)
    public = {"Host": "countersign.example.com", "Origin": PUBLIC}
    async with _client(bot, token, **public) as client:
        answer = await client.call_tool("approve_request", {"request_id": 1})
    assert not answer.is_error
    assert len(bot.cards(bot.dm("UARJUN"))) == 1

    origin = await _post(bot, token, _LIST, Origin=PUBLIC + ".evil.example")
    host = await _post(bot, token, _LIST, Host="evil-countersign.example.com")
    assert origin[0] == 403, origin
    assert host[0] == 421, host


@pytest.mark.parametrize("value", ["café €", "caf\udce9"], ids=["utf-8", "lone-latin-1-byte"])
async def test_a_header_value_outside_latin_1_is_served(bot: Bot, db: Database, value: str) -> None:
    """A header no part of MCP reads (X-Note) holding UTF-8 text, or a byte that is no UTF-8
    at all, does not turn a valid call into a 500: the tools are listed."""
    token = await _token(db)
    raw = value.encode("utf-8", "surrogateescape")
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", "X-Note": raw})  # type: ignore[dict-item]
    async with (
        http,
        Client(streamable_http_client(str(bot.server.make_url("/mcp")), http_client=http)) as c,
    ):
        listed = await c.list_tools()
    assert "list_branches" in {t.name for t in listed.tools}


@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_get_is_405_with_allow_and_logs_no_error(
    bot: Bot, db: Database, method: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The endpoint keeps no session, so there is no standing stream to GET (nor a session to
    DELETE): 405 at once with Allow: POST, and no line at error level once the client is gone."""
    token = await _token(db)
    caplog.set_level(logging.WARNING)
    with structlog.testing.capture_logs() as logs:
        async with bot.http.request(
            method,
            bot.server.make_url("/mcp"),
            headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"},
            timeout=aiohttp.ClientTimeout(total=10),
        ) as response:
            status, allow = response.status, response.headers.get("Allow")
            text = await response.text()
        await asyncio.sleep(0.2)  # the server's side of the closed connection has its turn
    assert (status, allow) == (405, "POST"), text
    assert "POST" in json.loads(text)["message"]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert [e for e in logs if e["log_level"] in ("error", "critical")] == []


@pytest.mark.parametrize("url", ["countersign.example.com", "ftp://x.example", "https://u:p@x"])
def test_a_public_url_that_is_no_address_stops_the_start_up(url: str) -> None:
    """COUNTERSIGN_PUBLIC_URL without its scheme, of another scheme or with a password in it
    is refused at start-up, saying what to set, rather than refusing every /mcp call later."""
    with pytest.raises(SettingsError, match=r"COUNTERSIGN_PUBLIC_URL must be the http\(s\)"):
        load_settings(_env_file=None, countersign_public_url=url)
