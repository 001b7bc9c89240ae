"""No credential a request carries reaches `serve`'s log, whatever the request does wrong."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.sandbox import WebApi as FakeSlack
from tests.reliability.harness import ServeProcess, link_everyone, wait_until
from tools import McpTokens
from tools.db import Database

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("backend", ["sqlite"], indirect=True)]

_COOKIE = "session=ck_9Qw2Zr7Lm4Tx8Vb1Nc6Yh3Pd5Sf0Gj"
_FORGED = "cs_mcp_Zm9yZ2VkLXRva2VuLWJ1dC1pdC1sb29rcy1yZWFsLXRvbw"
_MCP = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
_LIST = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _raw(served: ServeProcess, request: bytes) -> bytes:
    """Writes ``request`` as it is, bytes no client library would send, and reads the answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout=30)
    finally:
        writer.close()


async def _send(http: aiohttp.ClientSession, served: ServeProcess, path: str, **h: str) -> int:
    headers = {**_MCP, **h}
    async with http.post(f"{served.url}{path}", data=_LIST, headers=headers) as response:
        await response.read()
        return response.status


def _pieces(secret: str, size: int = 12) -> set[str]:
    """Every run of ``size`` characters of ``secret``: a log holding any part of it leaks it."""
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


@pytest.mark.parametrize("level", ["INFO", "DEBUG"])
async def test_no_log_line_holds_a_credential_of_a_failed_request(
    db: Database,
    database_url: str,
    slack: FakeSlack,
    http: aiohttp.ClientSession,
    tmp_path: Path,
    level: str,
) -> None:
    """An oversized Authorization or Cookie header (aiohttp's 400 quotes its first bytes), a
    header line with no colon, a forged or refused token, a token in the query string, a
    header value outside latin-1 and a GET left open: each with a live token or a cookie, and
    the whole log of the process, tracebacks included, holds no part of any of them."""
    await link_everyone(db)
    token, _ = await McpTokens(db).create(1, 2, name="Laptop")
    served = ServeProcess(database_url, slack, tmp_path, overrides={"LOG_LEVEL": level})
    await served.start(http)
    try:
        bearer = f"Bearer {token}"
        host = f"Host: 127.0.0.1:{served.port}\r\n".encode()
        statuses = [
            await _send(http, served, "/mcp", Authorization=bearer + "x" * 100_000),
            await _send(http, served, "/mcp", Authorization=bearer, Cookie=_COOKIE + "x" * 100_000),
            await _send(http, served, "/mcp", Authorization=f"Bearer {_FORGED}", Cookie=_COOKIE),
            await _send(http, served, f"/mcp?access_token={token}"),
            await _send(http, served, "/mcp", Authorization=bearer, **{"X-Note": "café €"}),
        ]
        malformed = await _raw(
            served,
            b"POST /mcp HTTP/1.1\r\n" + host + f"Authorization {bearer}\r\n\r\n".encode(),
        )
        control = await _raw(
            served,
            b"POST /mcp HTTP/1.1\r\n" + host + f"Authorization: {bearer}\x01\r\n\r\n".encode(),
        )
        async with http.get(
            f"{served.url}/mcp",
            headers={"Authorization": bearer, "Accept": "text/event-stream"},
            timeout=aiohttp.ClientTimeout(total=3),
        ) as response:
            statuses.append(response.status)

        async def logged() -> bool:
            text = served.log.read_text(errors="replace")
            return text.count("Error handling request") >= 4 and "mcp_token_refused" in text

        await wait_until(logged, seconds=30, what="the refused requests in the log")
    finally:
        served.stop()
    assert statuses[:4] == [400, 400, 401, 401], statuses
    assert [malformed.split(b"\r\n")[0][-15:], control.split(b"\r\n")[0][-15:]] == [
        b"400 Bad Request"
    ] * 2
    log = served.log.read_text(errors="replace")
    secret = token.removeprefix("cs_mcp_")
    for credential in (secret, _FORGED.removeprefix("cs_mcp_"), _COOKIE.removeprefix("session=")):
        leaked = sorted(piece for piece in _pieces(credential) if piece in log)
        assert not leaked, f"{credential[:6]}… is in the log: {leaked[:3]}\n{log[-4000:]}"
