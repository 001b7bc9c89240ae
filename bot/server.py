"""Builds the process from ``Settings`` and serves it until stopped; never handles a message itself.

The one composition root. It mounts only what is configured — Slack (HTTP, Socket Mode or
OAuth; the sandbox's Slack is plain HTTP), Teams, or both — on one aiohttp app beside
``GET /healthz``, which answers 200 only when the database does, and ``GET /metrics`` for
operators (``bot.runtime.metrics``). At start-up it settles cards a
stopped process left half-way, and while running it settles those stuck mid-write past a grace
period; each settled card is shown by the surface that posted it, as is every decision a
stopped process never showed. On shutdown the work in flight
finishes first, so nobody's approval is cut between the write and the card update.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

import aiohttp
import structlog
from aiohttp import web
from slack_sdk.errors import SlackApiError
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import Placement, Platform
from bot.presses import sweeps
from bot.presses.news import News, Untold
from bot.runtime.inbox import answer_left
from bot.runtime.lanes import Lane
from bot.runtime.logging import AccessLog
from bot.runtime.metrics import (
    METRICS,
    METRICS_DB,
    METRICS_TOKEN,
    Metrics,
    metrics_handler,
    publishing_lanes,
)
from bot.runtime.workers import LISTEN_BACKLOG, watch_parent
from bot.services import Background, Services
from bot.settings import Settings, SettingsError
from tools import CardRecord, CardSigner, Directory, ProcessLease
from tools.db import Database
from tools.toolsets.mcp import McpTools, SecretBox, SourceClients
from tools.toolsets.merchant import build_registry

if TYPE_CHECKING:
    from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration

    from bot.teams.auth import TokenChecker

__all__ = ["RUNTIME", "Mounted", "Runtime", "application", "build_services", "serve", "settle"]

log = structlog.get_logger("bot.server")
_HEALTH_TIMEOUT = 5.0


class Mounted(Protocol):
    """A surface on the app: its routes are added when built; it starts, stops, shows settled cards."""

    @property
    def platform(self) -> Platform: ...

    async def start(self, session: aiohttp.ClientSession) -> None: ...

    async def stop(self) -> None: ...

    async def show_settled(self, card: Card, placement: Placement) -> None: ...

    async def with_adapter(
        self, placement: Placement, work: Callable[[Adapter], Awaitable[None]]
    ) -> bool:
        """Runs ``work`` with an adapter bound to a card's copy, outside any request."""
        ...

    async def cards_changed(self, record: CardRecord) -> None:
        """Refreshes the per-person views of waiting cards (Slack's App Home) it concerns."""
        ...

    async def with_installation(
        self,
        installation: str,
        work: Callable[[Adapter], Awaitable[None]],
        *,
        user: str | None = None,
    ) -> bool:
        """Runs ``work`` with an adapter for one installation, outside any request and channel
        (a card asked for at ``/mcp`` goes to people's DMs); False when it cannot."""
        ...


@dataclass
class Runtime:
    """What the running app holds: the settings, the core's dependencies, the mounted surfaces."""

    settings: Settings
    services: Services
    mounted: dict[str, Mounted] = field(default_factory=dict[str, Mounted])
    session: aiohttp.ClientSession | None = None
    sweeper: asyncio.Task[None] | None = None
    # The owners told of their MCP servers' new tools (``bot.presses.news``); None: no sources.
    news: News | None = None


RUNTIME = web.AppKey("countersign", Runtime)


def application(
    settings: Settings,
    services: Services,
    *,
    teams_auth: AgentAuthConfiguration | None = None,
    teams_tokens: TokenChecker | None = None,
    news: Untold | None = None,
) -> web.Application:
    """The aiohttp app with every configured surface, and ``/healthz``.

    ``teams_auth`` mounts Teams with that app registration instead of the settings' one, and
    ``teams_tokens`` with that token check; only tests pass them (an anonymous configuration,
    so Activity JSON can be posted unsigned, or a key of their own standing in for Microsoft's).
    ``news``: the merchants' MCP sources whose new tools their owners are told of; the very
    ones the surface's registry lists, so the sweep starts and lists no server of its own.
    """
    web_app = web.Application()
    runtime = web_app[RUNTIME] = Runtime(settings, services)
    if news is not None:
        runtime.news = News(news, every=settings.countersign_mcp_list_ttl)
    web_app.router.add_get("/healthz", _healthz)
    _mount_metrics(web_app, settings, services)
    # Each surface is imported only when it is mounted: the Teams SDK alone took a quarter of
    # a Slack-only process's start-up (and every worker's, and the sandbox's) before this.
    if settings.slack_enabled:
        from bot.slack.routes import SlackRoutes

        runtime.mounted["slack"] = SlackRoutes.mount(web_app, settings, services)
    if settings.teams_enabled or teams_auth is not None:
        from bot.teams.app import TeamsRoutes

        runtime.mounted["teams"] = TeamsRoutes.mount(
            web_app, settings, services, auth=teams_auth, tokens=teams_tokens
        )
    if not runtime.mounted:
        raise SettingsError(settings.nothing_to_serve())
    # Agents elsewhere: their writes' cards reach people through the surfaces mounted here.
    from bot.mcp import McpEndpoint

    reaches = list(runtime.mounted.values())
    McpEndpoint(
        services,
        reaches,
        public_url=settings.countersign_public_url,
        secrets=settings.card_secrets(),
        loopback_clients=settings.countersign_oauth_loopback_clients,
    ).mount(web_app)
    web_app.on_startup.append(_start)
    web_app.on_cleanup.append(_stop)
    return web_app


def _mount_metrics(web_app: web.Application, settings: Settings, services: Services) -> None:
    """``GET /metrics`` (``bot.runtime.metrics``): this machine only, or anyone with the metrics token."""
    token = settings.countersign_metrics_token
    web_app[METRICS] = services.metrics
    web_app[METRICS_DB] = services.db
    web_app[METRICS_TOKEN] = token.get_secret_value() if token is not None else ""
    for lane in services.tasks.lanes.values():
        _watch(services.metrics, lane)
    # With several workers each writes its lanes for the others' scrapes (bot.runtime.metrics).
    web_app.cleanup_ctx.append(publishing_lanes)
    web_app.router.add_get("/metrics", metrics_handler)


def _watch(metrics: Metrics, lane: Lane) -> None:
    metrics.watch_lane(lane.name, waiting=lambda: lane.waiting, running=lambda: lane.running)


async def _start(web_app: web.Application) -> None:
    runtime = web_app[RUNTIME]
    runtime.session = aiohttp.ClientSession()
    for mounted in runtime.mounted.values():
        await mounted.start(runtime.session)
    # Before this server accepts a press: its claims carry a lease other processes see alive,
    # so a new process starting beside it (a rolling deploy) never settles its presses.
    lease = runtime.services.lease
    lease.expiry = timedelta(seconds=runtime.settings.countersign_reconcile_after)
    await lease.start()
    runtime.services.tasks.spawn(settle(runtime), name="reconcile")
    runtime.services.tasks.spawn(runtime.services.registry.warm(), name="start mcp sources")
    runtime.sweeper = asyncio.create_task(_sweep(runtime), name="reconcile sweep")
    log.info("started", surfaces=sorted(runtime.mounted))


async def _stop(web_app: web.Application) -> None:
    runtime = web_app[RUNTIME]
    if runtime.sweeper is not None:
        runtime.sweeper.cancel()
        await asyncio.gather(runtime.sweeper, return_exceptions=True)
    if runtime.news is not None:
        await runtime.news.stop()
    await runtime.services.tasks.drain()
    await runtime.services.lease.stop()  # after the drain: nothing of ours in flight
    for mounted in runtime.mounted.values():
        await mounted.stop()
    # A real model provider keeps HTTP connections open until told; without this a stopped
    # server leaks them (and warns about unclosed sockets on its way out).
    await runtime.services.assistant.aclose()
    # The merchants' MCP servers: stdio ones are child processes, stopped with us.
    await runtime.services.registry.aclose()
    if runtime.session is not None:
        await runtime.session.close()
    log.info("stopped")


async def _healthz(request: web.Request) -> web.Response:
    db = request.app[RUNTIME].services.db
    try:
        async with asyncio.timeout(_HEALTH_TIMEOUT), db.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError, TimeoutError) as down:
        log.warning("health_failed", error=type(down).__name__)
        return web.json_response({"ok": False, "database": "unreachable"}, status=503)
    return web.json_response({"ok": True, "database": "ok"})


async def settle(runtime: Runtime, *, now: datetime | None = None) -> None:
    """Settles cards whose process is gone and shows each copy where it was posted; then
    shows the decisions a process gone (or failing) never showed (``sweeps.redraw``), and
    answers the messages a gone process acknowledged and never answered (``bot.runtime.inbox``)."""
    for record in await runtime.services.registry.sweeps.reconcile(now=now):
        shown = False
        card = await cards.of_record(runtime.services.registry, record)
        for placement in card.placements:
            mounted = runtime.mounted.get(placement.platform)
            if mounted is not None:
                await mounted.show_settled(card, placement)
                shown = True
        event = "settled_posted" if shown else "settled_unposted"
        log.info(event, card_id=record.card_id, tenant=record.tenantid)
    now = now or runtime.services.registry.now()
    await sweeps.redraw(runtime.services, runtime.mounted, now=now)
    await answer_left(runtime.services.inbox, runtime.mounted)


async def _sweep(runtime: Runtime) -> None:
    """Settles, while running, cards stuck mid-write for longer than the grace period.

    Without it a card claimed just before the database connection dropped kept its buttons
    and answered "already approved" until some process restarted.
    """
    lease = runtime.services.lease
    while True:
        await asyncio.sleep(lease.beat_every.total_seconds())
        try:
            await lease.beat()
            await settle(runtime)
            await _move_on(runtime)
            if runtime.news is not None:  # in a task of its own: it waits for servers to list
                runtime.news.start(runtime.services, list(runtime.mounted.values()))
        except (SQLAlchemyError, OSError, SlackApiError) as failed:
            # The next round tries again; the cards stay executing until one succeeds.
            log.warning("sweep_failed", error=type(failed).__name__)
        except Exception:  # logged in full: the loop also keeps this process's lease alive
            log.exception("sweep_failed")


async def _move_on(runtime: Runtime, *, now: datetime | None = None) -> None:
    """Shows cards whose time ran out as expired, and escalates routed cards left undecided."""
    now = now or runtime.services.registry.now()
    await sweeps.expire(runtime.services, runtime.mounted, now=now)
    await sweeps.escalate(
        runtime.services,
        runtime.mounted,
        now=now,
        after=runtime.settings.countersign_escalate_after,
    )


def build_services(settings: Settings, db: Database, *, mcp: McpTools | None = None) -> Services:
    """The production core: every merchant tool and the configured model; ``mcp``: the
    merchants' MCP sources (new ones, with the settings' list reuse, when not given)."""
    from bot.agent import Assistant  # pydantic-ai and the providers: only a server needs them

    ttl = timedelta(seconds=settings.countersign_card_ttl)
    lease = ProcessLease(db)  # its expiry is the settings', set when the server starts
    registry = build_registry(db, CardSigner(settings.card_secrets(), ttl=ttl), lease=lease)
    registry.add_source(mcp or _mcp_tools(settings, db))
    return Services(
        registry,
        Assistant(registry, db, settings),
        Directory(db),
        db=db,
        lease=lease,
        audit_channel=settings.countersign_audit_channel,
        tasks=Background(
            turns=settings.countersign_turn_limit, presses=settings.countersign_press_limit
        ),
        typing_after=settings.countersign_typing_after,
    )


def _mcp_tools(settings: Settings, db: Database) -> McpTools:
    """The merchants' MCP sources, their stored secrets opened with ``COUNTERSIGN_SECRETS_KEY``."""
    secrets = SecretBox.of(settings.secrets_keys())
    return McpTools(db, SourceClients(list_ttl=settings.countersign_mcp_list_ttl, secrets=secrets))


async def serve(settings: Settings, *, sock: socket.socket | None = None) -> None:
    """Serves on ``settings.countersign_host``:``settings.port`` until SIGTERM/SIGINT.

    ``sock``: a listening socket to accept on instead (a worker's, from ``bot.runtime.workers``). Every
    line a worker logs then names it (``worker``: its process id), as the tasks it starts
    inherit the context bound here.
    """
    if sock is not None:
        structlog.contextvars.bind_contextvars(worker=os.getpid())
    db = Database(settings.database_url)
    try:
        # One McpTools for turns and the news sweep: two would start each stdio server twice.
        mcp = _mcp_tools(settings, db)
        web_app = application(settings, build_services(settings, db, mcp=mcp), news=mcp)
        runner = web.AppRunner(web_app, access_log_class=AccessLog)
        await runner.setup()
        try:
            site = (
                web.SockSite(runner, sock)
                if sock is not None
                else web.TCPSite(
                    runner, settings.countersign_host, settings.port, backlog=LISTEN_BACKLOG
                )
            )
            await site.start()
            log.info("serving", host=settings.countersign_host, port=settings.port)
            await _until_stopped(parent=os.getppid() if sock is not None else None)
        finally:
            await runner.cleanup()
    finally:
        await db.dispose()


async def _until_stopped(*, parent: int | None = None) -> None:
    """Returns on SIGTERM or SIGINT, or, for a worker, once ``parent`` (its supervisor) is gone."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    watching = asyncio.create_task(watch_parent(parent, stop)) if parent is not None else None
    await stop.wait()
    if watching is not None:
        watching.cancel()
    # The handlers stay until the loop closes: a repeated Ctrl-C or SIGTERM (``uv run`` forwards
    # Ctrl-C again 0.2 s later) must not interrupt the shutdown. Removing them here once let a
    # repeat land inside the database's dispose on a slow machine: a KeyboardInterrupt traceback
    # from the connection pool and exit status 130 after what was a clean stop.
