"""Mounts Teams on the app at ``POST /api/messages``; never handles a message itself.

Builds the Microsoft 365 Agents SDK pieces — the agent application with its routes, the cloud
adapter and its connections — from the settings, checks each request's Bot Framework token, and
hands the activity to the adapter. Invokes (card presses) are answered in the response body. A
message is answered 202 at once and its turn runs afterwards, in the task set, replying through
the conversation reference (``continue_conversation``), as is a card settled without a press
and a card asked for at ``/mcp``, in the 1:1 chat kept for each of its people (``chats``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import structlog
from aiohttp import web
from microsoft_agents.activity import (
    Activity,
    ActivityTypes,
    ChannelAccount,
    ConversationAccount,
    TextFormatTypes,
)
from microsoft_agents.authentication.msal import MsalConnectionManager
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import (
    AgentApplication,
    ApplicationOptions,
    MemoryStorage,
    TurnContext,
    TurnState,
)
from microsoft_agents.hosting.core.authorization import (
    AgentAuthConfiguration,
    AuthTypes,
    ClaimsIdentity,
)
from microsoft_agents.hosting.core.authorization.jwt import _authorize_request
from microsoft_agents.hosting.core.http import HttpResponse

from bot.adapter import Adapter
from bot.cards.card import Card
from bot.placement import Placement, Platform, TeamsPlacement
from bot.presses.decisions import show
from bot.services import Services
from bot.settings import Settings
from bot.teams import actions, caller, chats, consent, editing, texts, turns
from bot.teams.adapter import teams_adapter
from bot.teams.auth import JwksKeys, TokenChecker, TokenPolicy, TokenRefusedError
from bot.teams.stream import INTERVAL
from tools import CardRecord, ConsentSigner

__all__ = ["TEAMS", "Teams", "TeamsRoutes", "auth_configuration", "build_teams"]

log = structlog.get_logger("bot.teams.app")
ROUTE = "/api/messages"


@dataclass
class Teams:
    """What ``/api/messages`` needs: the token check's configuration, the adapter and the routes."""

    auth: AgentAuthConfiguration
    adapter: CloudAdapter
    application: AgentApplication[TurnState]
    app_id: str = ""
    # Checks every request's token (issuer, audience, app, service URL). None only in tests
    # that post Activity JSON without any token (an anonymous configuration).
    tokens: TokenChecker | None = None
    # Seconds between two updates of a streamed answer (Teams throttles faster ones).
    stream_interval: float = INTERVAL

    async def proactively(
        self, reference: Activity, callback: Callable[[TurnContext], Awaitable[None]]
    ) -> None:
        """Runs ``callback`` in the conversation ``reference`` names, outside any request."""
        if self.auth.ANONYMOUS_ALLOWED:
            # Only the tests' configuration: no app registration, so no token to ask for.
            await self.adapter.continue_conversation_with_claims(
                ClaimsIdentity(), reference, callback
            )
        else:
            await self.adapter.continue_conversation(self.app_id, reference, callback)


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


def build_teams(
    services: Services,
    auth: AgentAuthConfiguration,
    app_id: str = "",
    *,
    consents: ConsentSigner,
) -> Teams:
    """The SDK objects for one configuration, with every route registered."""
    connections = MsalConnectionManager(connections_configurations={"SERVICE_CONNECTION": auth})
    adapter = CloudAdapter(connection_manager=connections)
    adapter.on_turn_error = _turn_failed
    # No typing timer: a message turn sends one typing activity itself, and an invoke none.
    options = ApplicationOptions(storage=MemoryStorage(), start_typing_timer=False)
    application = AgentApplication[TurnState](options, connection_manager=connections)
    teams = Teams(auth, adapter, application, app_id)

    async def on_message(context: TurnContext, state: TurnState) -> None:
        sender, turn = turns.turn_of(context.activity)
        reference = context.activity.get_conversation_reference().get_continuation_activity()

        async def run(later: TurnContext) -> None:
            await turns.answer(services, later, sender, turn, stream_interval=teams.stream_interval)

        async def typing(later: TurnContext) -> None:
            await later.send_activity(Activity(type=ActivityTypes.typing))

        services.tasks.turn(
            teams.proactively(reference, run),
            name=f"teams {turn.receipts[0]}",
            conversation=turn.conversation,
            queued=lambda: teams.proactively(reference, typing),
        )

    def spoken(context: TurnContext) -> bool:
        return turns.is_spoken(context.activity)

    # First: the handlers below read the turn's caller from it.
    caller.register(application, services)
    chats.register(application, services)
    actions.register(application, services)
    consent.register(application, services, consents)
    editing.register(application, services)
    application.add_route(spoken, on_message)
    return teams


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


class TeamsRoutes:
    """Teams on the shared app: ``POST /api/messages`` and showing cards settled without a press."""

    def __init__(self, teams: Teams, services: Services, keys: JwksKeys | None = None) -> None:
        self.teams, self.services = teams, services
        # The issuers' signing keys, cached; fetched over the server's session once started.
        self.keys = keys

    @property
    def platform(self) -> Platform:
        return Platform.TEAMS

    @classmethod
    def mount(
        cls,
        web_app: web.Application,
        settings: Settings,
        services: Services,
        *,
        auth: AgentAuthConfiguration | None = None,
        tokens: TokenChecker | None = None,
    ) -> TeamsRoutes:
        """Adds ``POST /api/messages``.

        ``auth`` overrides the app registration and ``tokens`` the token check (tests only).
        """
        teams = build_teams(
            services,
            auth or auth_configuration(settings),
            settings.microsoft_app_id or "",
            consents=ConsentSigner(settings.card_secrets()),
        )
        keys = None
        if tokens is not None:
            teams.tokens = tokens
        elif auth is None:
            keys = JwksKeys()
            policy = TokenPolicy(teams.app_id, settings.microsoft_app_tenant_id)
            teams.tokens = TokenChecker(policy, keys)
        web_app[TEAMS] = teams
        web_app.router.add_post(ROUTE, _messages)
        log.info("teams_mounted", route=ROUTE)
        return cls(teams, services, keys)

    async def start(self, session: aiohttp.ClientSession) -> None:
        # The signing keys are fetched over the server's session; the SDK opens its own
        # connections per turn.
        if self.keys is not None:
            self.keys.session = session

    async def stop(self) -> None:
        return None

    async def show_settled(self, card: Card, placement: Placement) -> None:
        """Updates the card in its conversation proactively (no request to answer through)."""
        if await self.with_adapter(placement, lambda adapter: show(self.services, adapter, card)):
            log.info("teams_card_settled", card_id=card.card_id, tenant=card.tenantid)

    async def cards_changed(self, record: CardRecord) -> None:
        """Nothing per person to refresh yet."""

    async def with_adapter(
        self, placement: Placement, work: Callable[[Adapter], Awaitable[None]]
    ) -> bool:
        """Runs ``work`` proactively, with an adapter bound to the copy's conversation; False
        when the copy does not say where it is."""
        assert isinstance(placement, TeamsPlacement)
        if not placement.service_url or not placement.conversation_id:
            return False
        reference = Activity(
            type=ActivityTypes.event,
            name="ContinueConversation",
            channel_id="msteams",
            service_url=placement.service_url,
            conversation=ConversationAccount(
                id=placement.conversation_id, tenant_id=placement.tenant
            ),
            recipient=ChannelAccount(id=self.teams.app_id or "countersign"),
        )

        async def run(context: TurnContext) -> None:
            await work(await teams_adapter(self.services, context, None, tenant=placement.tenant))

        await self.teams.proactively(reference, run)
        return True

    async def with_installation(
        self,
        installation: str,
        work: Callable[[Adapter], Awaitable[None]],
        *,
        user: str | None = None,
    ) -> bool:
        """Runs ``work`` proactively, in the tenant ``installation``, with a Teams adapter: with
        ``user`` (an AAD object id), speaking in that person's 1:1 chat with the bot as them;
        without, from the tenant's chat kept last, only to look people up and send them copies
        in their own 1:1 chats. False without a chat kept in that tenant (for that person).

        Teams opens a chat only through a service URL it gave this process, and a card asked for
        at ``/mcp`` comes with none: the chats are kept from what people wrote (``chats``).
        """
        chat = await chats.find(self.services.db, installation, user)
        if chat is None:
            log.info("reach_no_chat", tenant=installation, person=user)
            return False
        sender = chat.who() if user is not None else None

        async def run(context: TurnContext) -> None:
            await work(await teams_adapter(self.services, context, sender, tenant=installation))

        await self.teams.proactively(chat.reference(), run)
        return True


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
    body = await _activity_body(request)
    identity = await _identity(teams, request.headers.get("Authorization"), body or {})
    if isinstance(identity, web.Response):
        return identity
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


async def _identity(
    teams: Teams, authorization: str | None, activity: dict[str, Any]
) -> ClaimsIdentity | web.Response:
    """Who sent the request, per its token; a 401 answer when the token proves nothing."""
    if teams.tokens is None:
        # Only the tests' anonymous configuration (the SDK's check, which then lets it in).
        found = await _authorize_request(authorization, teams.auth)
        if isinstance(found, HttpResponse):
            return web.json_response(found.body, status=found.status_code)
        return found
    try:
        claims = await teams.tokens.check(authorization, activity)
    except TokenRefusedError as refused:
        log.warning("teams_token_refused", why=str(refused))
        return web.json_response({"error": f"Unauthorized: {refused}."}, status=401)
    if teams.auth.ANONYMOUS_ALLOWED:
        # Tests only: the token was checked, but there is no app registration to answer with,
        # so the SDK must not ask Microsoft for tokens of its own.
        return ClaimsIdentity()
    token = (authorization or "").partition(" ")[2].strip()
    return ClaimsIdentity(claims, authentication_type="Bearer", security_token=token)


async def _activity_body(request: web.Request) -> dict[str, Any] | None:
    """The request's activity as JSON, or None when it is not one (not JSON, not an activity)."""
    try:
        body = await request.json()
        Activity.model_validate(body)
    except (ValueError, UnicodeDecodeError):  # JSONDecodeError and pydantic's ValidationError
        return None
    return body if isinstance(body, dict) else None
