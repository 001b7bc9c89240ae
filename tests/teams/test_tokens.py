"""Teams request tokens: one test per forgery, with a local RSA key standing in for Microsoft's."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives.asymmetric import rsa
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration

from bot.server import application
from bot.teams.auth import (
    BOT_FRAMEWORK_ISSUER,
    FAILED_FETCH_SECONDS,
    JwksKeys,
    TokenChecker,
    TokenPolicy,
    TokenRefusedError,
)
from tests.slack.conftest import bot_settings
from tests.support.teams_activities import message
from tests.support.teams_tokens import APP_ID, KID, MICROSOFT, StaticKeys, token
from tests.teams.conftest import ARJUN, TeamsBot

TENANT = "11111111-1111-1111-1111-111111111111"
SERVICE = "https://smba.trafficmanager.net/emea/"
ACTIVITY = {"type": "message", "serviceUrl": SERVICE}

FORGER = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _token(**claims: Any) -> str:
    """A Bot Connector token vouching for ``SERVICE`` unless the claims say otherwise."""
    return token(**{"serviceurl": SERVICE, **claims})


def _checker(*, tenant: str | None = TENANT) -> TokenChecker:
    return TokenChecker(TokenPolicy(APP_ID, tenant), StaticKeys())


async def _refused(header: str | None, activity: dict[str, Any] = ACTIVITY) -> str:
    with pytest.raises(TokenRefusedError) as refused:
        await _checker().check(header, activity)
    return str(refused.value)


async def test_a_bot_framework_token_for_this_bot_is_accepted() -> None:
    """The Bot Connector's token (issuer, audience, key, service URL all right) passes."""
    claims = await _checker().check(f"Bearer {_token()}", {**ACTIVITY, "serviceUrl": SERVICE[:-1]})
    assert claims["aud"] == APP_ID


async def test_entra_tokens_of_the_configured_tenant_issued_to_this_app_are_accepted() -> None:
    """v1 (appid) and v2 (azp) Entra tokens of the bot's own tenant and app pass."""
    v1 = _token(iss=f"https://sts.windows.net/{TENANT}/", appid=APP_ID, ver="1.0")
    v2 = _token(iss=f"https://login.microsoftonline.com/{TENANT}/v2.0", azp=APP_ID, ver="2.0")
    assert (await _checker().check(f"Bearer {v1}", ACTIVITY))["appid"] == APP_ID
    assert (await _checker().check(f"Bearer {v2}", ACTIVITY))["azp"] == APP_ID


async def test_no_token_is_refused() -> None:
    """A request without a bearer token is refused."""
    assert "no bearer token" in await _refused(None)
    assert "no bearer token" in await _refused(f"Basic {_token()}")


async def test_a_token_signed_by_another_key_is_refused() -> None:
    """A token with Microsoft's key id but someone else's signature is refused."""
    assert "not valid" in await _refused(f"Bearer {_token(key=FORGER)}")


async def test_an_unsigned_or_hmac_token_is_refused() -> None:
    """alg none and HS256 (a key anyone could guess) are not how Microsoft signs."""
    hmac = jwt.encode({"iss": BOT_FRAMEWORK_ISSUER, "aud": APP_ID}, "x" * 32, algorithm="HS256")
    assert "not signed the way" in await _refused(f"Bearer {hmac}")
    unsigned = jwt.encode({"iss": BOT_FRAMEWORK_ISSUER, "aud": APP_ID}, None, algorithm="none")
    assert "not signed the way" in await _refused(f"Bearer {unsigned}")


async def test_a_foreign_issuer_is_refused() -> None:
    """A token from an issuer that is neither the Bot Framework nor our tenant is refused."""
    assert "issuer" in await _refused(f"Bearer {_token(iss='https://evil.example')}")


async def test_another_tenants_entra_token_is_refused() -> None:
    """An Entra token from another tenant is refused, even issued to this app id."""
    other = "22222222-2222-2222-2222-222222222222"
    forged = _token(iss=f"https://sts.windows.net/{other}/", appid=APP_ID, ver="1.0")
    assert "issuer" in await _refused(f"Bearer {forged}")


async def test_a_multi_tenant_bot_accepts_no_entra_issuer() -> None:
    """Without a configured tenant, only the Bot Framework's own issuer is accepted."""
    token = _token(iss=f"https://sts.windows.net/{TENANT}/", appid=APP_ID, ver="1.0")
    with pytest.raises(TokenRefusedError, match="issuer"):
        await _checker(tenant=None).check(f"Bearer {token}", ACTIVITY)


async def test_a_token_for_another_app_is_refused() -> None:
    """A genuine token for another bot (another audience) is refused."""
    assert "another app" in await _refused(f"Bearer {_token(aud='some-other-bot')}")


async def test_an_entra_token_issued_to_another_app_is_refused() -> None:
    """An Entra token of our tenant whose appid/azp is another app is refused."""
    v1 = _token(iss=f"https://sts.windows.net/{TENANT}/", appid="other-app", ver="1.0")
    v2 = _token(iss=f"https://login.microsoftonline.com/{TENANT}/v2.0", azp="x", ver="2.0")
    assert "another app" in await _refused(f"Bearer {v1}")
    assert "another app" in await _refused(f"Bearer {v2}")


async def test_an_expired_token_is_refused() -> None:
    """A token past its expiry (beyond the documented clock skew) is refused."""
    old = int(time.time()) - 3600
    assert "expired" in await _refused(f"Bearer {_token(exp=old, nbf=old - 60)}")


async def test_a_service_url_the_token_does_not_vouch_for_is_refused() -> None:
    """An activity naming another service URL than its token's is refused, not just logged."""
    moved = {**ACTIVITY, "serviceUrl": "https://attacker.example/"}
    assert "not the one the token vouches for" in await _refused(f"Bearer {_token()}", moved)


async def test_a_token_without_a_service_url_is_refused() -> None:
    """A token that vouches for no service URL cannot send the bot anywhere."""
    assert "does not vouch" in await _refused(f"Bearer {_token(serviceurl=None)}")


@pytest.fixture
async def published() -> AsyncIterator[str]:
    """A loopback server publishing the local key as a JWKS document."""
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(MICROSOFT.public_key()))
    document = {"keys": [{**jwk, "kid": KID, "use": "sig", "alg": "RS256"}]}

    async def keys(request: web.Request) -> web.Response:
        return web.json_response(document)

    app = web.Application()
    app.router.add_get("/keys", keys)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/keys"
    finally:
        await runner.cleanup()


async def test_keys_are_fetched_from_the_published_key_set(published: str) -> None:
    """The production key source reads the issuer's JWKS and verifies with it."""
    policy = TokenPolicy(APP_ID, None, bot_framework_keys=published)
    async with aiohttp.ClientSession() as session:
        checker = TokenChecker(policy, JwksKeys(session))
        assert (await checker.check(f"Bearer {_token()}", ACTIVITY))["aud"] == APP_ID
        with pytest.raises(TokenRefusedError, match="does not publish"):
            await checker.check(f"Bearer {_token(kid='unknown')}", ACTIVITY)


class KeysDown:
    """A loopback key endpoint that is down (503), counting every fetch it is asked for."""

    def __init__(self) -> None:
        self.fetches = 0
        self.url = ""

    async def keys(self, request: web.Request) -> web.Response:
        self.fetches += 1
        return web.json_response({"error": "unavailable"}, status=503)


@pytest.fixture
async def keys_down() -> AsyncIterator[KeysDown]:
    down = KeysDown()
    app = web.Application()
    app.router.add_get("/keys", down.keys)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    down.url = f"http://127.0.0.1:{port}/keys"
    try:
        yield down
    finally:
        await runner.cleanup()


async def test_a_failed_key_fetch_is_not_repeated_for_every_bogus_token(
    keys_down: KeysDown,
) -> None:
    """While the key set cannot be fetched, every bogus token used to make the server fetch it
    again; now a second token within the window is refused without a fetch, and the set is
    asked for again only once the window has passed."""
    policy = TokenPolicy(APP_ID, None, bot_framework_keys=keys_down.url)
    now = [1000.0]
    async with aiohttp.ClientSession() as session:
        checker = TokenChecker(policy, JwksKeys(session, clock=lambda: now[0]))
        for kid in ("bogus-1", "bogus-2"):
            with pytest.raises(TokenRefusedError, match="could not be fetched"):
                await checker.check(f"Bearer {_token(kid=kid)}", ACTIVITY)
        assert keys_down.fetches == 1
        now[0] += FAILED_FETCH_SECONDS
        with pytest.raises(TokenRefusedError, match="could not be fetched"):
            await checker.check(f"Bearer {_token(kid='bogus-3')}", ACTIVITY)
        assert keys_down.fetches == 2


async def _served_with_tokens(teams: TeamsBot, database_url: str) -> TestServer:
    """The real app with a token check whose keys are the local stand-in for Microsoft's."""
    settings = bot_settings(teams.slack, database_url)
    checker = TokenChecker(TokenPolicy(APP_ID, None), StaticKeys())
    anonymous = AgentAuthConfiguration(anonymous_allowed=True)
    app = application(settings, teams.services, teams_auth=anonymous, teams_tokens=checker)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


async def test_over_the_endpoint_a_signed_activity_is_answered_and_forgeries_get_401(
    teams: TeamsBot, database_url: str
) -> None:
    """Through /api/messages: a token vouching for the connector's URL is answered there; a
    token signed by another key, or one vouching for another URL than the activity names, is
    refused with 401 and the bot calls nobody."""
    server = await _served_with_tokens(teams, database_url)
    url = server.make_url("/api/messages")
    try:
        vouched = _token(serviceurl=teams.connector.url)
        forged = _token(key=FORGER, serviceurl=teams.connector.url)
        moved = _token(serviceurl="https://smba.trafficmanager.net/amer/")
        for token, status in ((forged, 401), (moved, 401), (vouched, 202)):
            activity = message(ARJUN, "branches", service_url=teams.connector.url)
            headers = {"Authorization": f"Bearer {token}"}
            async with teams.http.post(url, json=activity, headers=headers) as response:
                assert response.status == status, await response.text()
            await teams.services.tasks.idle()
            if status == 401:
                assert teams.connector.calls == []
    finally:
        await server.close()
    assert any("Whitefield" in text for text in teams.connector.texts())
