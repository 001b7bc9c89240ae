"""Multi-workspace installs: the install page starts Slack's OAuth flow with state kept in the database."""

from __future__ import annotations

import re

import aiohttp
from aiohttp.test_utils import TestServer
from pydantic import SecretStr
from sqlalchemy import text

from bot.sandbox import WebApi
from bot.server import application, build_services
from bot.settings import Settings
from tests.slack.conftest import bot_settings
from tools.db import Database


def oauth_settings(slack: WebApi, database_url: str) -> Settings:
    return bot_settings(
        slack,
        database_url,
        slack_bot_token=None,
        slack_client_id="1111.2222",
        slack_client_secret=SecretStr("oauth-client-secret"),
    )


async def test_install_page_links_to_slack_with_a_stored_state(
    db: Database, database_url: str, slack: WebApi
) -> None:
    """GET /slack/install answers with Slack's authorize link (our client id, the bot scopes)
    and a state that the state store kept in the product's database."""
    settings = oauth_settings(slack, database_url)
    app = application(settings, build_services(settings, db))
    async with TestServer(app) as server, aiohttp.ClientSession() as http:
        response = await http.get(server.make_url("/slack/install"), allow_redirects=False)
        page = await response.text()

    assert response.status == 200
    link = re.search(r'href="(https://slack\.com/oauth/v2/authorize\?[^"]+)"', page)
    assert link is not None
    assert "client_id=1111.2222" in link.group(1)
    assert "chat:write" in link.group(1).replace("%3A", ":")
    state = re.search(r"state=([\w-]+)", link.group(1))
    assert state is not None
    async with db.session() as session:
        stored = await session.scalar(
            text("SELECT count(*) FROM slack_oauth_states WHERE state = :s"), {"s": state.group(1)}
        )
    assert stored == 1


async def test_a_forged_redirect_is_refused_without_a_server_error(
    db: Database, database_url: str, slack: WebApi
) -> None:
    """A callback with a state this server never issued is refused as a 4xx, and nothing is installed."""
    settings = oauth_settings(slack, database_url)
    app = application(settings, build_services(settings, db))
    async with TestServer(app) as server, aiohttp.ClientSession() as http:
        response = await http.get(
            server.make_url("/slack/oauth_redirect"), params={"code": "x", "state": "forged"}
        )

    assert 400 <= response.status < 500
    async with db.session() as session:
        installed = await session.scalar(text("SELECT count(*) FROM slack_installations"))
    assert installed == 0


async def _install(
    server: TestServer, http: aiohttp.ClientSession, *, invite: str | None, team: str
) -> str:
    """Runs the install as a browser would: the install page, then Slack's redirect back."""
    query = {"invite": invite} if invite else {}
    install = await http.get(server.make_url("/slack/install"), params=query)
    page = await install.text()
    state = re.search(r"state=([\w-]+)", page)
    assert state is not None, page
    # The browser sends back what the install page set (the state cookie is Secure, which a
    # client on plain-HTTP loopback would otherwise hold back).
    sent = "; ".join(f"{name}={morsel.value}" for name, morsel in install.cookies.items())
    back = await http.get(
        server.make_url("/slack/oauth_redirect"),
        params={"code": team, "state": state.group(1)},
        headers={"Cookie": sent},
    )
    assert back.status == 200, await back.text()
    return await back.text()


async def test_an_install_through_an_invite_link_connects_that_workspace_once(
    db: Database, database_url: str, slack: WebApi
) -> None:
    """The owner's install link connects the workspace that installs through it; the same link
    used again (another workspace) installs but connects nothing."""
    settings = oauth_settings(slack, database_url)
    services = build_services(settings, db)
    connections = services.directory.connections
    code = await connections.invite(2)
    slack.workspace.add_team("T0BOOKS", "Harbor Books HQ")
    slack.workspace.add_team("T0ELSE", "Someone else")
    app = application(settings, services)
    async with TestServer(app) as server, aiohttp.ClientSession() as http:
        first = await _install(server, http, invite=code, team="T0BOOKS")
    async with TestServer(app) as server, aiohttp.ClientSession() as http:
        second = await _install(server, http, invite=code, team="T0ELSE")
    assert "installed and connected" in first
    assert "not connected" in second and "already used" in second
    assert await connections.tenant_of("slack", "T0BOOKS") == 2
    assert await connections.tenant_of("slack", "T0ELSE") is None


async def test_an_install_without_an_invite_connects_nothing(
    db: Database, database_url: str, slack: WebApi
) -> None:
    """Installing from the plain install page installs the app and says how to connect it."""
    settings = oauth_settings(slack, database_url)
    services = build_services(settings, db)
    slack.workspace.add_team("T0ELSE", "Someone else")
    async with (
        TestServer(application(settings, services)) as server,
        aiohttp.ClientSession() as http,
    ):
        page = await _install(server, http, invite=None, team="T0ELSE")
    assert "not connected to a merchant yet" in page
    assert "countersign connect slack T0ELSE" in page
    assert await services.directory.connections.tenant_of("slack", "T0ELSE") is None
