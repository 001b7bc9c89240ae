"""Serves the Slack surface over aiohttp (or Socket Mode) until stopped; never handles a message.

``POST /slack/events`` takes events, interactivity and slash commands through bolt; ``GET
/healthz`` answers 200 only when the database does. At start-up it settles cards a stopped
process left half-way and shows their fate in Slack; on shutdown it lets the work in flight
finish, so nobody's approval is cut between the write and the card update.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import aiohttp
import structlog
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from bot.settings import Settings, SlackMode
from bot.slack.app import Bolt, build_bolt
from bot.slack.identity import PLATFORM
from bot.slack.inbound import bolt_request
from bot.slack.posting import show_decision
from bot.surface import Surface
from tools import CardRecord, CardSigner, reconcile
from tools.db import Database
from tools.directory import Directory
from tools.merchant import build_registry

__all__ = ["RUNTIME", "Runtime", "serve", "web_application"]

log = structlog.get_logger("bot.slack.server")
Settler = Callable[[CardRecord], Awaitable[None]]
_HEALTH_TIMEOUT = 5.0


@dataclass
class Runtime:
    """What the web application holds once started: the bolt app and the HTTP session."""

    settings: Settings
    surface: Surface
    bolt: Bolt | None = None
    session: aiohttp.ClientSession | None = None
    sweeper: asyncio.Task[None] | None = None
    # How each surface shows a card settled at start-up or by the sweep, by platform; Slack's
    # is added at start-up, others (Teams) when they are mounted.
    settlers: dict[str, Settler] = field(default_factory=dict[str, "Settler"])

    @property
    def ready(self) -> Bolt:
        assert self.bolt is not None, "the web application has not started"
        return self.bolt


RUNTIME = web.AppKey("countersign_slack", Runtime)


def web_application(settings: Settings, surface: Surface) -> web.Application:
    """The aiohttp application: Slack's endpoint (unless Socket Mode), OAuth pages, health."""
    web_app = web.Application()
    web_app[RUNTIME] = Runtime(settings, surface)
    web_app.router.add_get("/healthz", _healthz)
    if settings.slack_mode is not SlackMode.SOCKET:
        web_app.router.add_post("/slack/events", _slack_events)
    if settings.slack_mode is SlackMode.OAUTH:
        web_app.router.add_get("/slack/install", _oauth_install)
        web_app.router.add_get("/slack/oauth_redirect", _oauth_redirect)
    web_app.on_startup.append(_start)
    web_app.on_cleanup.append(_stop)
    return web_app


async def _start(web_app: web.Application) -> None:
    runtime = web_app[RUNTIME]
    runtime.session = aiohttp.ClientSession()
    runtime.bolt = await build_bolt(runtime.settings, runtime.surface, runtime.session)
    runtime.settlers[PLATFORM] = lambda record: _show_on_slack(runtime, record)
    # Before this server accepts a press: its claims carry a lease other processes see alive.
    lease = runtime.surface.registry.lease
    lease.expiry = timedelta(seconds=runtime.settings.countersign_reconcile_after)
    await lease.start()
    runtime.surface.tasks.spawn(_settle(runtime), name="reconcile")
    runtime.sweeper = asyncio.create_task(_sweep(runtime), name="reconcile sweep")
    log.info("slack_started", mode=str(runtime.settings.slack_mode))


async def _stop(web_app: web.Application) -> None:
    runtime = web_app[RUNTIME]
    if runtime.sweeper is not None:
        runtime.sweeper.cancel()
        await asyncio.gather(runtime.sweeper, return_exceptions=True)
    await runtime.surface.tasks.drain()
    await runtime.surface.registry.lease.stop()  # after the drain: nothing of ours in flight
    # A real model provider keeps HTTP connections open until told; without this a stopped
    # server leaks them (and warns about unclosed sockets on its way out).
    await runtime.surface.assistant.aclose()
    if runtime.session is not None:
        await runtime.session.close()
    log.info("slack_stopped")


async def _slack_events(request: web.Request) -> web.Response:
    bolt = request.app[RUNTIME].ready
    inbound = await bolt_request(request)
    if inbound is None:
        # Without this a body that is not Slack's shape answers 500 from inside bolt.
        log.warning("slack_request_malformed", content_type=request.content_type)
        return web.json_response({"ok": False, "error": "malformed_request"}, status=400)
    return await to_aiohttp_response(await bolt.app.async_dispatch(inbound))


async def _oauth_install(request: web.Request) -> web.Response:
    flow = request.app[RUNTIME].ready.app.oauth_flow
    if flow is None:
        raise web.HTTPNotFound
    return await to_aiohttp_response(await flow.handle_installation(await to_bolt_request(request)))


async def _oauth_redirect(request: web.Request) -> web.Response:
    flow = request.app[RUNTIME].ready.app.oauth_flow
    if flow is None:
        raise web.HTTPNotFound
    response: BoltResponse = await flow.handle_callback(await to_bolt_request(request))
    return await to_aiohttp_response(response)


async def _healthz(request: web.Request) -> web.Response:
    db = request.app[RUNTIME].surface.registry.db
    try:
        async with asyncio.timeout(_HEALTH_TIMEOUT), db.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError, TimeoutError) as down:
        log.warning("health_failed", error=type(down).__name__)
        return web.json_response({"ok": False, "database": "unreachable"}, status=503)
    return web.json_response({"ok": True, "database": "ok"})


async def _settle(runtime: Runtime, *, now: datetime | None = None) -> None:
    """Settles cards left ``executing`` and shows each where it was posted, on its surface."""
    for record in await reconcile(runtime.surface.registry, now=now):
        platform = str((record.surface or {}).get("platform") or "")
        settler = runtime.settlers.get(platform)
        if settler is None:
            log.warning(
                "settled_unposted",
                card_id=record.card_id,
                tenant=record.tenantid,
                platform=platform or None,
            )
            continue
        await settler(record)
        log.info(
            "settled_posted", card_id=record.card_id, tenant=record.tenantid, platform=platform
        )


async def _show_on_slack(runtime: Runtime, record: CardRecord) -> None:
    client = await _client_for(runtime, record)
    if client is None:
        log.warning("settled_no_installation", card_id=record.card_id, tenant=record.tenantid)
        return
    await show_decision(runtime.surface, client, record)


async def _sweep(runtime: Runtime) -> None:
    """Settles, while running, cards stuck mid-write for longer than the grace period.

    Without it a card claimed just before the database connection dropped kept its buttons
    and answered "already approved" until some process restarted.
    """
    lease = runtime.surface.registry.lease
    while True:
        await asyncio.sleep(lease.beat_every.total_seconds())
        try:
            await lease.beat()
            await _settle(runtime)
        except (SQLAlchemyError, OSError, SlackApiError) as failed:
            # The next round tries again; the cards stay executing until one succeeds.
            log.warning("sweep_failed", error=type(failed).__name__)


async def _client_for(runtime: Runtime, record: CardRecord) -> AsyncWebClient | None:
    """The app's client, or with OAuth a client holding that workspace's bot token."""
    bolt = runtime.ready
    if bolt.installations is None:
        return bolt.client
    team = str((record.surface or {}).get("team") or "")
    org = team.startswith("E")
    bot = await bolt.installations.async_find_bot(
        enterprise_id=team if org else None,
        team_id=None if org else team,
        is_enterprise_install=org,
    )
    if bot is None:
        return None
    return AsyncWebClient(
        token=bot.bot_token,
        base_url=bolt.client.base_url,
        session=runtime.session,
        retry_handlers=bolt.client.retry_handlers,
    )


def build_surface(settings: Settings, db: Database) -> Surface:
    """The production surface: every merchant tool and the configured model."""
    from bot.agent import Assistant

    ttl = timedelta(seconds=settings.countersign_card_ttl)
    registry = build_registry(db, CardSigner(settings.card_secrets(), ttl=ttl))
    return Surface(
        registry,
        Assistant(registry, settings),
        Directory(db),
        audit_channel=settings.countersign_audit_channel,
    )


async def serve(settings: Settings) -> None:
    """Runs the Slack surface on ``settings.countersign_host``:``settings.port`` until SIGTERM/SIGINT."""
    from bot.web import application  # every configured surface (Teams too) on this one app

    db = Database(settings.database_url)
    web_app = application(settings, build_surface(settings, db))
    runner = web.AppRunner(web_app)
    await runner.setup()
    socket: AsyncSocketModeHandler | None = None
    try:
        await web.TCPSite(runner, settings.countersign_host, settings.port).start()
        if settings.slack_mode is SlackMode.SOCKET and settings.slack_app_token is not None:
            socket = AsyncSocketModeHandler(
                web_app[RUNTIME].ready.app, settings.slack_app_token.get_secret_value()
            )
            await socket.connect_async()  # type: ignore[no-untyped-call]
        log.info(
            "serving",
            host=settings.countersign_host,
            port=settings.port,
            mode=str(settings.slack_mode),
        )
        await _until_stopped()
    finally:
        if socket is not None:
            await socket.close_async()  # type: ignore[no-untyped-call]
        await runner.cleanup()
        await db.dispose()


async def _until_stopped() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
