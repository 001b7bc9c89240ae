"""Clients that are their metadata document's URL: fetched bounded, checked, never from a private address."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.slack.conftest import Bot, said
from tests.slack.test_mcp_oauth import (
    ARJUN_EMAIL,
    _ask,
    _base,
    _consent_cards,
    _get,
    _outcome,
    _pkce,
    _press,
    _token,
)

pytestmark = pytest.mark.slow

REDIRECT = "https://chatgpt.com/connector_platform_oauth_redirect"
LOOPBACK = [{"countersign_oauth_loopback_clients": True}]


@dataclass
class Documents:
    """A loopback server of clients' metadata documents, counting each fetch."""

    server: TestServer
    served: dict[str, Any] = field(default_factory=dict[str, Any])
    hits: list[str] = field(default_factory=list[str])

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))

    def serve(self, path: str, **document: Any) -> str:
        url = self.url(path)
        self.served[path] = {"client_id": url, "redirect_uris": [REDIRECT], **document}
        return url


@pytest.fixture
async def documents() -> AsyncIterator[Documents]:
    holder: list[Documents] = []

    async def answer(request: web.Request) -> web.StreamResponse:
        docs = holder[0]
        docs.hits.append(request.path)
        found = docs.served.get(request.path)
        if found is None:
            raise web.HTTPNotFound
        if isinstance(found, bytes):
            return web.Response(body=found, content_type="application/json")
        return web.json_response(found)

    app = web.Application()
    app.router.add_get("/{name:.*}", answer)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    holder.append(Documents(server))
    try:
        yield holder[0]
    finally:
        await server.close()


async def _authorize(bot: Bot, client_id: str, challenge: str) -> tuple[int, Any, dict[str, str]]:
    query = {
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
        "code_challenge": challenge, "state": "s", "resource": f"{_base(bot)}/mcp",
    }  # fmt: skip
    return await _get(bot, "/authorize", params=query)


async def test_the_server_says_it_takes_metadata_documents(bot: Bot) -> None:
    """The authorization server's metadata says client_id_metadata_document_supported."""
    _, meta, _ = await _get(bot, "/.well-known/oauth-authorization-server")
    assert meta["client_id_metadata_document_supported"] is True


@pytest.mark.parametrize("bot", LOOPBACK, indirect=True)
async def test_a_client_named_by_its_document_connects(bot: Bot, documents: Documents) -> None:
    """client_id is the document's URL: the card names the document's client_name, and the
    code is exchanged for tokens under that same client_id; the document is fetched once."""
    client_id = documents.serve("/chatgpt.json", client_name="ChatGPT")
    verifier, challenge = _pkce()
    status, body, headers = await _authorize(bot, client_id, challenge)
    assert status == 302, body
    handle = parse_qs(urlsplit(headers["Location"]).query)["request"][0]
    await _ask(bot, handle, ARJUN_EMAIL)
    [card] = _consent_cards(bot, "UARJUN")
    assert "ChatGPT" in said(card.blocks)
    assert "chatgpt.com" in said(card.blocks)
    await _press(bot, "UARJUN", card, "consent_allow")
    code = parse_qs(urlsplit((await _outcome(bot, handle))["redirect"]).query)["code"][0]
    status, tokens = await _token(
        bot, grant_type="authorization_code", code=code, client_id=client_id,
        code_verifier=verifier, redirect_uri=REDIRECT, resource=f"{_base(bot)}/mcp",
    )  # fmt: skip
    assert status == 200, tokens
    assert documents.hits == ["/chatgpt.json"]


@pytest.fixture
async def knocks() -> AsyncIterator[tuple[int, list[int]]]:
    """A loopback port that counts every connection made to it (TLS or not), and closes it."""
    seen: list[int] = []

    async def count(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(1)
        writer.close()

    server = await asyncio.start_server(count, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield port, seen
    finally:
        server.close()
        await server.wait_closed()


async def test_without_the_setting_a_loopback_document_is_never_fetched(
    bot: Bot, knocks: tuple[int, list[int]]
) -> None:
    """By address (127.0.0.1) or by a name that resolves there (localhost), over http or
    https: refused, and nothing ever connects to the port."""
    port, seen = knocks
    _, challenge = _pkce()
    for url in (
        f"http://127.0.0.1:{port}/c.json",
        f"https://127.0.0.1:{port}/c.json",
        f"https://localhost:{port}/c.json",
        f"https://[::ffff:127.0.0.1]:{port}/c.json",
    ):
        status, body, _ = await _authorize(bot, url, challenge)
        assert status == 400, (url, body)
        assert "not found" in body["error_description"]
    assert seen == []


@pytest.mark.parametrize("bot", LOOPBACK, indirect=True)
async def test_a_document_that_does_not_fit_is_refused(bot: Bot, documents: Documents) -> None:
    """A document naming another client_id, asking for a secret, listing no redirect, or
    larger than 64 KB is no client."""
    _, challenge = _pkce()
    other = documents.serve("/other.json")
    documents.served["/other.json"]["client_id"] = "https://elsewhere.example/c.json"
    secret = documents.serve("/secret.json", token_endpoint_auth_method="client_secret_post")
    none = documents.serve("/none.json")
    documents.served["/none.json"]["redirect_uris"] = []
    big = documents.url("/big.json")
    padding = "x" * (70 * 1024)
    documents.served["/big.json"] = json.dumps(
        {"client_id": big, "redirect_uris": [REDIRECT], "client_name": padding}
    ).encode()
    for url in (other, secret, none, big):
        status, body, _ = await _authorize(bot, url, challenge)
        assert status == 400, (url, body)
