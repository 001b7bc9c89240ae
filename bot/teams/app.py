"""Serves the Teams surface at ``POST /api/messages`` on the shared aiohttp app; never handles a message itself.

Builds the Microsoft 365 Agents SDK pieces — the agent application with its routes, the cloud
adapter and its connections — from the settings, checks each request's Bot Framework token, and
hands the activity to the adapter. Invokes (card presses) are answered in the response body;
everything else gets 202 once its turn is done.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web
from microsoft_agents.activity import Activity, ActivityTypes, TextFormatTypes
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import (
    AgentApplication,
    ApplicationOptions,
    MemoryStorage,
    TurnContext,
    TurnState,
)
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration, AuthTypes
from microsoft_agents.hosting.core.authorization.jwt import _authorize_request
from microsoft_agents.hosting.core.http import HttpResponse

from bot.settings import Settings
from bot.surface import Surface
from bot.teams import actions, texts, turns

__all__ = ["TEAMS", "Teams", "auth_configuration", "build_teams", "mount"]

log = structlog.get_logger("bot.teams.app")
ROUTE = "/api/messages"


@dataclass
class Teams:
    """What ``/api/messages`` needs: the token check's configuration, the adapter and the routes."""

    auth: AgentAuthConfiguration
    adapter: CloudAdapter
    application: AgentApplication[TurnState]


TEAMS = web.AppKey("countersign_teams", Teams)


def auth_configuration(settings: Settings) -> AgentAuthConfiguration:
    """The app registration from MICROSOFT_APP_ID / _PASSWORD / _TENANT_ID (client secret)."""
    assert settings.microsoft_app_id, "the Teams surface is mounted only with MICROSOFT_APP_ID"
    assert settings.microsoft_app_password, "settings refuse an app id without its password"
    return AgentAuthConfiguration(
        auth_type=AuthTypes.client_secret,
        client_id=settings.microsoft_app_id,
        client_secret=settings.microsoft_app_password.get_secret_value(),
        tenant_id=settings.microsoft_app_tenant_id,
    )


def build_teams(surface: Surface, auth: AgentAuthConfiguration) -> Teams:
    """The SDK objects for one configuration, with every route registered."""
    connections = MsalConnectionManager(connections_configurations={"SERVICE_CONNECTION": auth})
    adapter = CloudAdapter(connection_manager=connections)
    adapter.on_turn_error = _turn_failed
    # No typing timer: a message turn sends one typing activity itself, and an invoke none.
    options = ApplicationOptions(storage=MemoryStorage(), start_typing_timer=False)
    application = AgentApplication[TurnState](options, connection_manager=connections)

    async def on_message(context: TurnContext, state: TurnState) -> None:
        await turns.answer(surface, context)

    def spoken(context: TurnContext) -> bool:
        return turns.is_spoken(context.activity)

    actions.register(application, surface)
    application.add_route(spoken, on_message)
    return Teams(auth, adapter, application)


async def _turn_failed(context: TurnContext, error: Exception) -> None:
    # The SDK's default tells the person the exception's text; they get an apology instead,
    # and the log keeps the whole story.
    log.error("teams_turn_failed", activity=context.activity.type, exc_info=error)
    if context.activity.type == ActivityTypes.message:
        reply = Activity(
            type=ActivityTypes.message,
            text=texts.working_failed(),
            text_format=TextFormatTypes.plain,
        )
        await context.send_activity(reply)


def mount(
    web_app: web.Application,
    settings: Settings,
    surface: Surface,
    *,
    auth: AgentAuthConfiguration | None = None,
) -> None:
    """Adds ``POST /api/messages``; ``auth`` overrides the settings' app registration (tests only)."""
    web_app[TEAMS] = build_teams(surface, auth or auth_configuration(settings))
    web_app.router.add_post(ROUTE, _messages)
    log.info("teams_mounted", route=ROUTE)


class _Request:
    """The request as the SDK's adapter reads it, with the identity the token check found."""

    def __init__(self, request: web.Request, identity: Any, body: dict[str, Any]) -> None:
        self._request, self._identity, self._body = request, identity, body

    @property
    def method(self) -> str:
        return self._request.method

    @property
    def headers(self) -> Mapping[str, str]:
        return self._request.headers

    async def json(self) -> dict[str, Any]:
        return self._body

    def get_claims_identity(self) -> Any:
        return self._identity

    def get_path_param(self, name: str) -> str:
        return self._request.match_info[name]


async def _messages(request: web.Request) -> web.Response:
    teams = request.app[TEAMS]
    # The SDK's own check (signature, issuer, audience; anonymous only when configured so).
    # Its aiohttp middleware would wrap every route of the shared app, Slack's too.
    identity = await _authorize_request(request.headers.get("Authorization"), teams.auth)
    if isinstance(identity, HttpResponse):
        return web.json_response(identity.body, status=identity.status_code)
    body = await _activity_body(request)
    if body is None:
        # Without this a body that is JSON but not an activity (an array, a string) reached
        # the SDK and answered 500, which the Bot Framework retries.
        log.warning("teams_request_malformed", content_type=request.content_type)
        return web.json_response({"error": "the body is not a Bot Framework activity"}, status=400)
    response = await teams.adapter.process_request(
        _Request(request, identity, body), teams.application
    )
    if response.body is not None:
        return web.json_response(response.body, status=response.status_code)
    return web.Response(status=response.status_code)


async def _activity_body(request: web.Request) -> dict[str, Any] | None:
    """The request's activity as JSON, or None when it is not one (not JSON, not an activity)."""
    try:
        body = await request.json()
        Activity.model_validate(body)
    except (ValueError, UnicodeDecodeError):  # JSONDecodeError and pydantic's ValidationError
        return None
    return body if isinstance(body, dict) else None
