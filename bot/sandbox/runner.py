"""Runs the local sandbox beside the real bot until stopped; never lets the bot skip its HTTP endpoint.

Two listeners on loopback, each owned by one piece: the sandbox (the page, Slack's Web API
and the response URLs) on ``PORT`` — 3000, or the next free port — and the bot on a free port
of its own, started by the same ``serve`` production runs, pointed at the sandbox through
``SLACK_API_URL`` with a bot token and a signing secret made up for this run. Whatever a
person does on the page reaches the bot as a signed request to its ``/slack/events``.
The page listens on ``COUNTERSIGN_HOST``, loopback unless asked otherwise; the bot always on
loopback.
"""

from __future__ import annotations

import asyncio
import errno
import secrets
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from aiohttp import web
from pydantic import SecretStr

from bot.sandbox.acting import Acting
from bot.sandbox.delivery import Delivery
from bot.sandbox.page import add_page_routes
from bot.sandbox.people import demo_workspace
from bot.sandbox.store import WorkspaceStore, state_file
from bot.sandbox.webapi import WebApi
from bot.settings import Settings

__all__ = ["PORTS_TRIED", "Sandbox", "run_sandbox", "start_sandbox"]

ServeFn = Callable[[Settings], Awaitable[None]]
ResetFn = Callable[[], Awaitable[object]]
PORTS_TRIED = 20
_LOOPBACK = "127.0.0.1"
_READY_WAIT = 120.0


@dataclass
class Sandbox:
    """The running sandbox: its Web API, what people do, and where the page is."""

    api: WebApi
    acting: Acting
    runner: web.AppRunner
    url: str
    store: WorkspaceStore | None = None

    async def stop(self) -> None:
        await self.acting.drain()
        await self.acting.delivery.close()
        await self.runner.cleanup()
        if self.store is not None:
            self.store.save()  # what changed in the last moment is kept too


async def start_sandbox(
    *,
    host: str,
    port: int,
    bot_events: str,
    secret: str,
    token: str,
    retry_delays: tuple[float, ...] = (0.0, 1.0, 5.0),
    state: Path | None = None,
    reset_data: ResetFn | None = None,
) -> Sandbox:
    """Serves the page and the Web API on ``host``, on ``port`` or the next free one.

    With ``state``, the workspace is read from that file and kept there as it changes.
    ``reset_data`` starts the bot's demo data afresh when the page's "Start the demo afresh"
    is pressed; the workspace starts afresh with it.
    """
    workspace = demo_workspace()
    store = WorkspaceStore(state) if state is not None else None
    if store is not None:
        store.load(workspace)
        store.attach(workspace)
    api = WebApi(workspace, token=token)
    acting = Acting(api, Delivery(bot_events, secret, retry_delays=retry_delays))

    async def afresh() -> None:
        # The data first: were the workspace emptied first, a press on a card still on
        # someone's screen could reach the old data in between.
        if reset_data is not None:
            await reset_data()
        workspace.start_afresh(demo_workspace())
        if store is not None:
            store.save()

    app = web.Application()
    api.routes(app)
    add_page_routes(app, acting, host=host, afresh=afresh)
    runner = web.AppRunner(app)
    await runner.setup()
    bound = await _bind(runner, host, port)
    # The bot reaches the Web API (and response URLs) over loopback even when the page is
    # shared on another interface.
    api.url = f"http://{_LOOPBACK if host in ('0.0.0.0', '::') else host}:{bound}"  # noqa: S104
    return Sandbox(api, acting, runner, f"http://{host}:{bound}", store)


async def _bind(runner: web.AppRunner, host: str, port: int) -> int:
    for candidate in range(port, port + PORTS_TRIED):
        try:
            await web.TCPSite(runner, host, candidate).start()
        except OSError as busy:
            if busy.errno != errno.EADDRINUSE:
                raise
            continue
        return candidate
    raise OSError(errno.EADDRINUSE, f"ports {port} to {port + PORTS_TRIED - 1} are all in use")


def free_port(host: str = _LOOPBACK) -> int:
    """A port nobody listens on right now, chosen by the operating system."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def bot_settings(
    settings: Settings, *, api_url: str, port: int, token: str, secret: str
) -> Settings:
    """The bot's settings for this run: production's, pointed at the sandbox."""
    return settings.model_copy(
        update={
            "slack_bot_token": SecretStr(token),
            "slack_signing_secret": SecretStr(secret),
            "slack_app_token": None,
            "slack_client_id": None,
            "slack_client_secret": None,
            "slack_api_url": api_url,
            "countersign_host": _LOOPBACK,
            "port": port,
        }
    )


async def run_sandbox(
    settings: Settings,
    *,
    serve_bot: ServeFn,
    announce: Callable[[str], None],
    reset_data: ResetFn | None = None,
) -> None:
    """Starts the sandbox and the bot, announces the page's URL once the bot answers, runs until stopped.

    ``reset_data`` is what the page's "Start the demo afresh" does to the bot's database.
    """
    bot_port = free_port()
    secret, token = secrets.token_hex(24), f"xoxb-sandbox-{secrets.token_hex(12)}"
    sandbox = await start_sandbox(
        host=settings.countersign_host,
        port=settings.port,
        secret=secret,
        token=token,
        bot_events=f"http://{_LOOPBACK}:{bot_port}/slack/events",
        state=state_file(settings.database_url),
        reset_data=reset_data,
    )
    configured = bot_settings(
        settings, api_url=sandbox.api.base_url, port=bot_port, token=token, secret=secret
    )
    ready = asyncio.create_task(_announce_when_ready(bot_port, sandbox.url, announce))
    try:
        await serve_bot(configured)
    finally:
        ready.cancel()
        await sandbox.stop()


async def _announce_when_ready(bot_port: int, url: str, announce: Callable[[str], None]) -> None:
    health = f"http://{_LOOPBACK}:{bot_port}/healthz"
    try:
        async with aiohttp.ClientSession() as http, asyncio.timeout(_READY_WAIT):
            # Polling, not an event: the bot is another server, and /healthz is how it says ready.
            while not await _healthy(http, health):  # noqa: ASYNC110
                await asyncio.sleep(0.1)
    except TimeoutError:
        # Without this line a bot stuck at start-up would leave the terminal silent.
        announce(
            f"The sandbox is at {url}, but the bot has not answered for {_READY_WAIT:.0f} s; "
            "run with LOG_LEVEL=INFO to see why."
        )
        return
    announce(f"Countersign is running in a local Slack sandbox: {url}  (Ctrl-C stops it)")


async def _healthy(http: aiohttp.ClientSession, url: str) -> bool:
    try:
        async with http.get(url) as response:
            return response.status == 200
    except aiohttp.ClientError:
        return False  # not listening yet
