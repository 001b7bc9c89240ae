"""Connecting an agent by OAuth 2.1 at /mcp: discovery, registration, the consent card, tokens."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from bot.mcp.oauth_routes import BROWSER_COOKIE
from bot.sandbox import Message
from bot.sandbox.payloads import block_action
from tests.slack.conftest import Bot, buttons, request_status, said
from tools import McpTokens

pytestmark = pytest.mark.slow

REDIRECT = "https://claude.ai/api/mcp/auth_callback"
ARJUN_EMAIL = "arjun@fiesta.example"


def _base(bot: Bot) -> str:
    return str(bot.server.make_url("")).rstrip("/")


async def _get(bot: Bot, path: str, **kw: Any) -> tuple[int, Any, dict[str, str]]:
    async with bot.http.get(bot.server.make_url(path), allow_redirects=False, **kw) as r:
        text = await r.text()
        body = json.loads(text) if r.content_type == "application/json" else text
        return r.status, body, dict(r.headers)


async def _post(bot: Bot, path: str, **kw: Any) -> tuple[int, Any, dict[str, str]]:
    async with bot.http.post(bot.server.make_url(path), allow_redirects=False, **kw) as r:
        text = await r.text()
        body = json.loads(text) if r.content_type == "application/json" else text
        return r.status, body, dict(r.headers)


async def _register(bot: Bot, **extra: Any) -> str:
    meta = {"redirect_uris": [REDIRECT], "client_name": "Claude"}
    status, body, _ = await _post(bot, "/register", json={**meta, **extra})
    assert status == 201, body
    return str(body["client_id"])


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _consent_cards(bot: Bot, user: str) -> list[Message]:
    dm = bot.dm(user)
    return [
        m for m in bot.slack.messages if m.channel == dm and "consent_allow" in buttons(m.blocks)
    ]


async def _authorize(bot: Bot, client_id: str, challenge: str, *, resource: str | None) -> str:
    """Follows /authorize to the page; returns the page's request handle."""
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
    }
    if resource is not None:
        query["resource"] = resource
    status, body, headers = await _get(bot, "/authorize", params=query)
    assert status == 302, body
    location = headers["Location"]
    return parse_qs(urlsplit(location).query)["request"][0]


# The browser cookie each page's handle was given (aiohttp's jar keeps none for an IP address).
_BROWSERS: dict[str, str] = {}


async def _ask(bot: Bot, handle: str, email: str) -> str:
    data = {"request": handle, "email": email}
    async with bot.http.post(bot.server.make_url("/oauth/consent"), data=data) as r:
        status, page = r.status, await r.text()
        _BROWSERS[handle] = r.cookies[BROWSER_COOKIE].value
    assert status == 200, page
    assert "Check your Slack" in page
    return str(page)


async def _press(bot: Bot, user: str, card: Message, action: str) -> None:
    await bot.tap(user, card, action)


async def _outcome(bot: Bot, handle: str) -> dict[str, Any]:
    cookie = {"Cookie": f"{BROWSER_COOKIE}={_BROWSERS[handle]}"}
    status, body, _ = await _get(
        bot, "/oauth/consent/status", params={"request": handle}, headers=cookie
    )
    assert status == 200, body
    return dict(body)


async def _code(bot: Bot, client_id: str, challenge: str) -> str:
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    await _ask(bot, handle, ARJUN_EMAIL)
    await _press(bot, "UARJUN", _consent_cards(bot, "UARJUN")[-1], "consent_allow")
    redirect = (await _outcome(bot, handle))["redirect"]
    return parse_qs(urlsplit(redirect).query)["code"][0]


async def _token(bot: Bot, **form: str) -> tuple[int, Any]:
    status, body, _ = await _post(bot, "/token", data=form)
    return status, body


async def test_discovery_documents_name_this_server(bot: Bot) -> None:
    """Both protected resource documents name the public /mcp and this issuer; the server's
    document lists every endpoint and S256 alone."""
    base = _base(bot)
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        status, prm, _ = await _get(bot, path)
        assert status == 200
        assert prm["resource"] == f"{base}/mcp"
        assert prm["authorization_servers"] == [base]
    status, meta, _ = await _get(bot, "/.well-known/oauth-authorization-server")
    assert status == 200
    assert meta["issuer"] == base
    assert meta["authorization_endpoint"] == f"{base}/authorize"
    assert meta["token_endpoint"] == f"{base}/token"
    assert meta["registration_endpoint"] == f"{base}/register"
    assert meta["revocation_endpoint"] == f"{base}/revoke"
    assert meta["code_challenge_methods_supported"] == ["S256"]


async def test_a_call_without_a_token_is_told_where_the_metadata_is(bot: Bot) -> None:
    """401 with WWW-Authenticate naming resource_metadata; a personal token still works."""
    status, _, headers = await _post(
        bot, "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )
    assert status == 401
    want = f'resource_metadata="{_base(bot)}/.well-known/oauth-protected-resource/mcp"'
    assert want in headers["WWW-Authenticate"]
    text, _ = await McpTokens(bot.services.db).create(1, 2, name="Laptop")
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {text}"})
    async with http, Client(streamable_http_client(f"{_base(bot)}/mcp", http_client=http)) as c:
        assert "list_branches" in {t.name for t in (await c.list_tools()).tools}


async def test_a_foreign_host_or_origin_is_refused_on_the_oauth_endpoints(bot: Bot) -> None:
    """The OAuth endpoints get /mcp's Host and Origin checks: 421 and 403."""
    host = await _get(
        bot, "/.well-known/oauth-authorization-server", headers={"Host": "evil.example"}
    )
    origin = await _post(bot, "/register", json={}, headers={"Origin": "http://evil.example"})
    assert host[0] == 421
    assert origin[0] == 403


async def test_dynamic_registration_makes_a_public_client_with_exact_redirects(bot: Bot) -> None:
    """A client registers with no secret; an authorization naming another redirect is refused."""
    status, body, _ = await _post(
        bot, "/register", json={"redirect_uris": [REDIRECT], "client_name": "Cursor"}
    )
    assert status == 201, body
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    refused = await _post(
        bot,
        "/register",
        json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"},
    )
    assert refused[0] == 400
    assert "public clients only" in refused[1]["error_description"]
    _, challenge = _pkce()
    query = {
        "response_type": "code", "client_id": body["client_id"], "code_challenge": challenge,
        "redirect_uri": REDIRECT + "/other", "resource": f"{_base(bot)}/mcp",
    }  # fmt: skip
    status, page, _ = await _get(bot, "/authorize", params=query)
    assert status == 400
    assert "not registered" in page["error_description"]


async def test_allow_on_the_card_gives_the_page_its_code_and_tokens_that_call_as_arjun(
    bot: Bot,
) -> None:
    """The card names the client, its host, the merchant, what it may do and the page's code;
    Allow sends the browser on with code and state; the token calls /mcp as Arjun."""
    client_id = await _register(bot)
    verifier, challenge = _pkce()
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    page = await _ask(bot, handle, ARJUN_EMAIL)
    [card] = _consent_cards(bot, "UARJUN")
    text = said(card.blocks)
    code = text.split("shows the code *")[1].split("*")[0]
    assert code in page
    assert "Claude" in text
    assert "claude.ai" in text
    assert "Fiesta Foods" in text
    assert "ask for changes that wait for a countersignature like any card" in text
    assert (await _outcome(bot, handle)) == {"status": "waiting"}

    await _press(bot, "UARJUN", card, "consent_allow")
    assert buttons(bot.shown(card).blocks) == []
    redirect = (await _outcome(bot, handle))["redirect"]
    query = parse_qs(urlsplit(redirect).query)
    assert redirect.startswith(REDIRECT)
    assert query["state"] == ["st-1"]
    status, tokens = await _token(
        bot, grant_type="authorization_code", code=query["code"][0], client_id=client_id,
        code_verifier=verifier, redirect_uri=REDIRECT, resource=f"{_base(bot)}/mcp",
    )  # fmt: skip
    assert status == 200, tokens
    assert tokens["expires_in"] <= 3600
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {tokens['access_token']}"})
    async with http, Client(streamable_http_client(f"{_base(bot)}/mcp", http_client=http)) as c:
        await c.call_tool("approve_request", {"request_id": 1})
    assert len(bot.cards(bot.dm("UARJUN"))) == 1  # the write is a card in Arjun's DM
    audit = await bot.audit.recent(tenantid=1, limit=20)
    assert any(r.tool == "connect_agent" and code in r.detail for r in audit)


async def test_deny_sends_access_denied(bot: Bot) -> None:
    """Deny on the card sends the browser on with error=access_denied and no code."""
    client_id = await _register(bot)
    _, challenge = _pkce()
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    await _ask(bot, handle, ARJUN_EMAIL)
    await _press(bot, "UARJUN", _consent_cards(bot, "UARJUN")[0], "consent_deny")
    query = parse_qs(urlsplit((await _outcome(bot, handle))["redirect"]).query)
    assert query["error"] == ["access_denied"]
    assert "code" not in query


async def test_no_answer_within_ten_minutes_is_access_denied(bot: Bot) -> None:
    """A card nobody answers for 10 minutes: the page goes on with access_denied, and a late
    Allow changes nothing."""
    client_id = await _register(bot)
    _, challenge = _pkce()
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    await _ask(bot, handle, ARJUN_EMAIL)
    bot.clock.step(timedelta(minutes=10, seconds=1))
    query = parse_qs(urlsplit((await _outcome(bot, handle))["redirect"]).query)
    assert query["error"] == ["access_denied"]
    await _press(bot, "UARJUN", _consent_cards(bot, "UARJUN")[0], "consent_allow")
    assert "code" not in parse_qs(urlsplit((await _outcome(bot, handle))["redirect"]).query)


async def test_an_unknown_email_gets_the_same_page_and_no_card(bot: Bot) -> None:
    """An email that is nobody's: the same page with a code, no card anywhere, never a code."""
    client_id = await _register(bot)
    _, challenge = _pkce()
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    before = len(bot.slack.messages)
    page = await _ask(bot, handle, "stranger@elsewhere.example")
    assert "class=code id=code>" in page
    assert len(bot.slack.messages) == before
    assert (await _outcome(bot, handle)) == {"status": "waiting"}


async def test_someone_else_pressing_the_card_decides_nothing(bot: Bot) -> None:
    """Meera pressing Allow with Arjun's consent value: refused, the page still waits."""
    client_id = await _register(bot)
    _, challenge = _pkce()
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    await _ask(bot, handle, ARJUN_EMAIL)
    await _press(bot, "UMEERA", _consent_cards(bot, "UARJUN")[0], "consent_allow")
    assert (await _outcome(bot, handle)) == {"status": "waiting"}


async def test_a_missing_or_wrong_resource_is_refused(bot: Bot) -> None:
    """/authorize without resource, or naming another server, redirects with invalid_target;
    /token naming another resource is refused."""
    client_id = await _register(bot)
    verifier, challenge = _pkce()
    for resource in (None, "https://elsewhere.example/mcp"):
        query = {
            "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
            "code_challenge": challenge,
        }  # fmt: skip
        if resource:
            query["resource"] = resource
        status, _, headers = await _get(bot, "/authorize", params=query)
        assert status == 302
        assert "error=invalid_target" in headers["Location"]
    code = await _code(bot, client_id, challenge)
    status, body = await _token(
        bot, grant_type="authorization_code", code=code, client_id=client_id,
        code_verifier=verifier, redirect_uri=REDIRECT, resource="https://elsewhere.example/mcp",
    )  # fmt: skip
    assert status == 400
    assert body["error"] == "invalid_target"


async def test_a_wrong_verifier_and_a_reused_code_are_refused(bot: Bot) -> None:
    """A verifier that does not match gets invalid_grant; a code used twice gets
    invalid_grant and the tokens the first use gave stop working."""
    client_id = await _register(bot)
    verifier, challenge = _pkce()
    code = await _code(bot, client_id, challenge)
    form = {
        "grant_type": "authorization_code", "code": code, "client_id": client_id,
        "redirect_uri": REDIRECT, "resource": f"{_base(bot)}/mcp",
    }  # fmt: skip
    wrong = await _token(bot, **form, code_verifier=_pkce()[0])
    assert wrong[0] == 400
    assert wrong[1]["error"] == "invalid_grant"
    first = await _token(bot, **form, code_verifier=verifier)
    assert first[0] == 200
    again = await _token(bot, **form, code_verifier=verifier)
    assert again[0] == 400
    assert again[1]["error"] == "invalid_grant"
    status, _, _ = await _post(
        bot, "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {first[1]['access_token']}"},
    )  # fmt: skip
    assert status == 401


async def test_refresh_rotates_and_reuse_revokes_the_grant(bot: Bot) -> None:
    """Each refresh gives a new refresh token; the old one presented again revokes the grant,
    so even the newest tokens get 401."""
    client_id = await _register(bot)
    verifier, challenge = _pkce()
    code = await _code(bot, client_id, challenge)
    _, tokens = await _token(
        bot, grant_type="authorization_code", code=code, client_id=client_id,
        code_verifier=verifier, redirect_uri=REDIRECT, resource=f"{_base(bot)}/mcp",
    )  # fmt: skip
    old = tokens["refresh_token"]
    status, new = await _token(
        bot, grant_type="refresh_token", refresh_token=old, client_id=client_id
    )
    assert status == 200, new
    assert new["refresh_token"] != old
    reuse = await _token(bot, grant_type="refresh_token", refresh_token=old, client_id=client_id)
    assert reuse[0] == 400
    newest = await _token(
        bot, grant_type="refresh_token", refresh_token=new["refresh_token"], client_id=client_id
    )
    assert newest[0] == 400
    status, _, _ = await _post(
        bot, "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {new['access_token']}"},
    )  # fmt: skip
    assert status == 401


@dataclass
class _Memory:
    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class _Browser:
    """What a person does with the authorization page: types Arjun's email, presses Allow."""

    bot: Bot
    result: list[AuthorizationCodeResult] = field(default_factory=list[AuthorizationCodeResult])

    async def redirect(self, url: str) -> None:
        async with self.bot.http.get(url, allow_redirects=False) as r:
            page = urlsplit(r.headers["Location"])
        handle = parse_qs(page.query)["request"][0]
        await _ask(self.bot, handle, ARJUN_EMAIL)
        await _press(self.bot, "UARJUN", _consent_cards(self.bot, "UARJUN")[-1], "consent_allow")
        query = parse_qs(urlsplit((await _outcome(self.bot, handle))["redirect"]).query)
        self.result.append(
            AuthorizationCodeResult(
                code=query["code"][0], state=query["state"][0], iss=query["iss"][0]
            )
        )

    async def callback(self) -> AuthorizationCodeResult:
        return self.result[-1]


async def test_the_sdks_oauth_client_connects_end_to_end(bot: Bot) -> None:
    """mcp.client.auth discovers, registers, sends the person to the page, gets the code
    after Allow, and lists Fiesta's tools as Arjun."""
    browser = _Browser(bot)
    auth = OAuthClientProvider(
        server_url=f"{_base(bot)}/mcp",
        client_metadata=OAuthClientMetadata(
            redirect_uris=[AnyUrl(REDIRECT)],
            client_name="Claude",
            token_endpoint_auth_method="none",
        ),
        storage=_Memory(),
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    http = httpx2.AsyncClient(auth=auth, timeout=30)
    async with http, Client(streamable_http_client(f"{_base(bot)}/mcp", http_client=http)) as c:
        names = {t.name for t in (await c.list_tools()).tools}
    assert "list_branches" in names
    assert len(browser.result) == 1


async def test_only_the_browser_that_typed_the_email_is_told_the_code(bot: Bot) -> None:
    """After Allow, a poll of the same page from another browser (the address alone, or a
    made-up cookie) gets 403 and no code; the person's own browser still gets it."""
    client_id = await _register(bot)
    _, challenge = _pkce()
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    await _ask(bot, handle, ARJUN_EMAIL)
    await _press(bot, "UARJUN", _consent_cards(bot, "UARJUN")[0], "consent_allow")
    for cookie in ({}, {"Cookie": f"{BROWSER_COOKIE}=made-up"}):
        status, body, _ = await _get(
            bot, "/oauth/consent/status", params={"request": handle}, headers=cookie
        )
        assert status == 403, body
        assert "redirect" not in body
    assert "code=" in (await _outcome(bot, handle))["redirect"]


async def test_the_revocation_endpoint_ends_the_grant_at_once(bot: Bot) -> None:
    """A client revoking its refresh token at /revoke: its access token gets 401 at once, and
    the refresh token gives nothing."""
    client_id = await _register(bot)
    verifier, challenge = _pkce()
    code = await _code(bot, client_id, challenge)
    _, tokens = await _token(
        bot, grant_type="authorization_code", code=code, client_id=client_id,
        code_verifier=verifier, redirect_uri=REDIRECT, resource=f"{_base(bot)}/mcp",
    )  # fmt: skip
    form = {"token": tokens["refresh_token"], "client_id": client_id}
    status, body, _ = await _post(bot, "/revoke", data=form)
    assert status == 200, body
    status, _, _ = await _post(
        bot, "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )  # fmt: skip
    assert status == 401
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}
    again = await _token(bot, **refresh, client_id=client_id)
    assert again[0] == 400


async def test_a_consent_value_approves_no_card_and_a_card_token_allows_no_agent(bot: Bot) -> None:
    """Swapping the buttons' values: Arjun's consent value sent as a card's Approve, and his
    pending card's Approve token sent as the consent's Allow, decide neither; the card stays
    pending and the page keeps waiting."""
    client_id = await _register(bot)
    _, challenge = _pkce()
    handle = await _authorize(bot, client_id, challenge, resource=f"{_base(bot)}/mcp")
    await _ask(bot, handle, ARJUN_EMAIL)
    [consent] = _consent_cards(bot, "UARJUN")
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    approve = _value(card, "card_approve")
    allow = _value(consent, "consent_allow")
    await bot.interact(_swapped(consent, "consent_allow", approve))
    await bot.interact(_swapped(card, "card_approve", allow))
    assert (await _outcome(bot, handle)) == {"status": "waiting"}
    assert await request_status(bot, 1) == "pending"
    assert "card_approve" in buttons(bot.shown(card).blocks)


def _value(message: Message, action: str) -> str:
    block = next(b for b in message.blocks if b.get("type") == "actions")
    return str(next(e for e in block["elements"] if e["action_id"] == action)["value"])


def _swapped(message: Message, action: str, value: str) -> dict[str, Any]:
    block = next(b for b in message.blocks if b.get("type") == "actions")
    return block_action(
        "UARJUN", action_id=action, value=value, block_id=block["block_id"],
        channel=message.channel, message_ts=message.ts, thread_ts=message.thread_ts,
    )  # fmt: skip
