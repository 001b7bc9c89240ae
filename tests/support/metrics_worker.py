"""One worker of a several-worker server, for tests: the real app, with the turns and lanes given.

Run ``python -m tests.support.metrics_worker DATABASE_URL TURNS WAITING RUNNING`` with
``PROMETHEUS_MULTIPROC_DIR`` set, as the supervisor starts a worker. It serves the real app
(Slack only) on a free loopback port and records TURNS turn times of 1 s each. Only after the
app has started does it queue WAITING turns and hold RUNNING presses, so only the periodic lane
writes can show them. Then it prints ``ready PID PORT`` and serves until its stdin closes.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from typing import Any

from aiohttp import web
from pydantic import SecretStr

from bot.agent import Assistant
from bot.server import application
from bot.services import Services
from bot.settings import Settings
from tools import CardSigner, ProcessLease
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry

_SECRET = "card-secret-for-metrics-workers-0123456789"


def _settings(database_url: str) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": SecretStr("xoxb-not-used"),
        "slack_signing_secret": SecretStr("signing-secret-not-used"),
        "slack_api_url": "http://127.0.0.1:1/api/",
        "slack_app_token": None,
        "slack_client_id": None,
        "slack_client_secret": None,
        "microsoft_app_id": None,
        "microsoft_app_password": None,
        "microsoft_app_tenant_id": None,
        "countersign_secret": SecretStr(_SECRET),
        "database_url": database_url,
    }
    return Settings(_env_file=None, **values)


async def _hold(released: asyncio.Event) -> None:
    await released.wait()


async def _serve(services: Services, configured: Settings, *, waiting: int, running: int) -> None:
    runner = web.AppRunner(application(configured, services))
    await runner.setup()
    released = asyncio.Event()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        for _ in range(waiting):
            services.tasks.lanes["turn"].queue()
        for n in range(running):
            services.tasks.spawn(_hold(released), name=f"held {n}", lane="press")
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print("ready", os.getpid(), port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    finally:
        released.set()
        await runner.cleanup()


async def main(database_url: str, turns: int, waiting: int, running: int) -> None:
    """Serves as one worker until stdin closes."""
    db = Database(database_url)
    try:
        configured = _settings(database_url)
        lease = ProcessLease(db)
        registry = build_registry(db, CardSigner([_SECRET]), lease=lease)
        services = Services(
            registry, Assistant(registry, db, configured), Directory(db), db=db, lease=lease
        )
        for _ in range(turns):
            services.metrics.turn_seconds.labels(platform="slack").observe(1.0)
        await _serve(services, configured, waiting=waiting, running=running)
    finally:
        await db.dispose()


if __name__ == "__main__":
    url, turns, waiting, running = sys.argv[1], *map(int, sys.argv[2:5])
    asyncio.run(main(url, turns, waiting, running))
    gc.freeze()  # as `countersign` ends (bot.cli.run): no last collection over the whole app
