"""Wires the bolt app: the Web API client, authorization (one token or OAuth) and the listeners.

Builds objects only; never serves HTTP (``routes``) and never handles a message itself. The
client shares one aiohttp session (without it every call opens and closes a connection) and
retries Slack's 429s and 5xxs; bolt copies both, and ``base_url``, into per-request clients.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import aiohttp
import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.oauth.async_callback_options import AsyncCallbackOptions, AsyncFailureArgs
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.sqlalchemy import AsyncSQLAlchemyInstallationStore
from slack_sdk.oauth.state_store.sqlalchemy import AsyncSQLAlchemyOAuthStateStore
from slack_sdk.web.async_client import AsyncWebClient

from bot.presses.ladder import DATABASE_DOWN
from bot.services import Services
from bot.settings import Settings, SlackMode
from bot.slack import (
    actions,
    assistant,
    caller,
    commands,
    consent,
    editing,
    events,
    feedback,
    home,
)
from bot.slack.install import on_installed
from tools import ConsentSigner

__all__ = ["BOT_SCOPES", "Bolt", "build_bolt", "web_client"]

# Exactly what the listeners use; manifest.yml lists the same scopes. ``im:write`` opens the
# DM a private copy of a card goes to (``conversations.open``); ``assistant:write`` sets an
# assistant thread's status, suggested prompts and title (``bot.slack.assistant``).
BOT_SCOPES = (
    "app_mentions:read",
    "assistant:write",
    "channels:history",
    "groups:history",
    "im:history",
    "im:write",
    "chat:write",
    "commands",
    "reactions:write",
    "users:read",
    "users:read.email",
)
log = structlog.get_logger("bot.slack.app")
_OAUTH_STATE_SECONDS = 600
_RETRY_AFTER_S = "5"
_SLACK_API = "https://slack.com/api/"


@dataclass
class Bolt:
    """The bolt app and what it owns: its client and, with OAuth, the installation store."""

    app: AsyncApp
    client: AsyncWebClient
    installations: AsyncInstallationStore | None = None


def web_client(settings: Settings, session: aiohttp.ClientSession) -> AsyncWebClient:
    """The app's Web API client: one session, Slack's rate limits and hiccups retried."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    if settings.slack_mode is SlackMode.OAUTH:
        token = None  # each request gets its workspace's token from the installation store
    base = (settings.slack_api_url or _SLACK_API).rstrip("/") + "/"
    retries = [
        AsyncRateLimitErrorRetryHandler(max_retry_count=2),
        AsyncServerErrorRetryHandler(max_retry_count=2),
    ]
    return AsyncWebClient(token=token, base_url=base, session=session, retry_handlers=retries)


async def build_bolt(
    settings: Settings, services: Services, session: aiohttp.ClientSession
) -> Bolt:
    """The bolt app for this configuration, with every listener registered."""
    client = web_client(settings, session)
    oauth = (
        await _oauth_settings(settings, services)
        if settings.slack_mode is SlackMode.OAUTH
        else None
    )
    secret = (
        settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    )
    app = AsyncApp(
        name="countersign",
        signing_secret=secret,
        client=client,
        oauth_settings=oauth,
        logger=logging.getLogger("bot.slack.bolt"),
        # Listeners only read the payload and hand the work to the task set, so running them
        # before the response costs nothing. Otherwise bolt answers as soon as ack() is called
        # (polling for it every 10 ms) while the listener is still on its way to the task set,
        # and a caller waiting for the work in flight could find none yet.
        process_before_response=True,
    )
    app.error(_on_error)
    # First: every listener below, the assistant's middleware's included, reads the caller.
    caller.register(app, services)
    assistant.register(app, services)
    events.register(app, services, ignore_uninstall=oauth is None)
    if oauth is not None:
        app.enable_token_revocation_listeners()
    actions.register(app, services)
    feedback.register(app, services)
    editing.register(app, services)
    commands.register(app, services)
    home.register(app, services)
    consent.register(app, services, ConsentSigner(settings.card_secrets()))
    return Bolt(app, client, oauth.installation_store if oauth else None)


async def _oauth_settings(settings: Settings, services: Services) -> AsyncOAuthSettings:
    """Multi-workspace installs, stored beside everything else in the product's database."""
    assert settings.slack_client_id
    assert settings.slack_client_secret
    # The state store reads a state and then deletes it, and the installation store reads
    # before it saves: on SQLite a write another connection made in between failed an
    # install's callback with "database is locked" (401), once the inbox wrote beside it.
    engine = services.db.writing_engine
    installations = AsyncSQLAlchemyInstallationStore(
        client_id=settings.slack_client_id, engine=engine
    )
    states = AsyncSQLAlchemyOAuthStateStore(expiration_seconds=_OAUTH_STATE_SECONDS, engine=engine)
    # Both stores create only their own tables, and only when missing.
    await installations.create_tables()  # type: ignore[no-untyped-call]
    await states.create_tables()  # type: ignore[no-untyped-call]
    return AsyncOAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=settings.slack_client_secret.get_secret_value(),
        scopes=list(BOT_SCOPES),
        installation_store=installations,
        state_store=states,
        callback_options=AsyncCallbackOptions(
            success=on_installed(services.directory.connections),
            failure=_default_failure,
        ),
    )


async def _on_error(error: Exception, logger: logging.Logger) -> BoltResponse | None:
    """A listener's failure: 503 with ``Retry-After`` when it is the database being down.

    Bolt answers every failure 500, which the listeners that read the database before they
    answer (an Edit or Reject press opening its form, an edit submitted, a slash command) would
    give while PostgreSQL restarts. Like ``/healthz``, an unreachable database is a 503 saying
    when to try again; anything else is still a 500, logged in full.
    """
    if isinstance(error, DATABASE_DOWN):
        log.warning("slack_request_database_down", error=type(error).__name__)
        return BoltResponse(status=503, body="", headers={"Retry-After": _RETRY_AFTER_S})
    logger.exception("listener_failed", exc_info=error)
    return None


async def _default_failure(args: AsyncFailureArgs) -> BoltResponse:
    return await args.default.failure(args)
