"""Sets the stage for a benchmark: quiet logs, seeded databases, a fake Slack, servers on loopback.

Nothing here leaves the machine: databases are temporary files or a throwaway PostgreSQL
cluster, and every HTTP server listens on 127.0.0.1 on a port the OS picks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import asyncpg
import structlog
from aiohttp import web
from pydantic import SecretStr
from pydantic_ai import models
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from sqlalchemy import update

from bot.sandbox import BOT_TOKEN, WebApi
from bot.settings import Settings
from tests.support.postgres import PostgresCluster
from tests.support.slack_requests import TEAM
from tools.db import PROPOSALS, Database
from tools.db.migrate import upgrade_async
from tools.toolsets.merchant.demo import load_demo

__all__ = [
    "CARD_SECRET",
    "SIGNING_SECRET",
    "SlackApart",
    "SlackApi",
    "bare_bolt",
    "fake_slack",
    "own_target",
    "postgres_database",
    "quiet_logs",
    "serve",
    "settings_for",
    "slack_apart",
    "sqlite_database",
]

SIGNING_SECRET = "bench-signing-secret-0123456789"
CARD_SECRET = "bench-card-secret-0123456789abcdef"
# Slack user → (name, email) of the demo people the benchmarks act as.
PEOPLE = {
    "UPRIYA": ("Priya Raman", "priya@fiesta.example"),
    "UARJUN": ("Arjun Mehta", "arjun@fiesta.example"),
}

# No benchmark ever talks to a real model provider.
models.ALLOW_MODEL_REQUESTS = False


async def own_target(db: Database, card_id: str) -> None:
    """Gives a benchmark's card a target of its own.

    The press benchmarks put hundreds of cards for one stock line on the table at once; with
    one live card per target each would replace the one before. The press path they measure
    is the same for a card on any target.
    """
    async with db.begin() as conn:
        await conn.execute(
            update(PROPOSALS).where(PROPOSALS.c.id == card_id).values(target=f"bench:{card_id}")
        )


def quiet_logs() -> None:
    """Logs as production does (INFO, rendered) but into /dev/null, so the cost stays counted."""
    sink = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="%Y-%m-%d %H:%M:%S", utc=True),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(20),
        logger_factory=structlog.PrintLoggerFactory(file=sink),
        cache_logger_on_first_use=False,
    )


async def sqlite_database(directory: Path, name: str = "countersign.db") -> str:
    """A migrated SQLite file holding the demo merchants; returns its URL."""
    url = f"sqlite+aiosqlite:///{directory / name}"
    await upgrade_async(url)
    await _seed(url)
    return url


async def _seed(url: str) -> None:
    db = Database(url)
    try:
        await load_demo(db)
    finally:
        await db.dispose()


@contextlib.contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


async def postgres_database(cluster: PostgresCluster, name: str) -> str:
    """A migrated database on the cluster holding the demo merchants; returns its URL."""
    conn = await asyncpg.connect(cluster.url().replace("+asyncpg", ""))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = cluster.url(name)
    await upgrade_async(url)
    await _seed(url)
    return url


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="countersign-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.asynccontextmanager
async def fake_slack() -> AsyncIterator[WebApi]:
    slack = WebApi(team_id=TEAM)
    for user, (name, email) in PEOPLE.items():
        slack.add_user(user, name, email)
    await slack.start()
    try:
        yield slack
    finally:
        await slack.stop()


class SlackApi(Protocol):
    """Where the bot finds Slack's Web API: the fake in this process, or in one of its own."""

    @property
    def base_url(self) -> str: ...


@dataclass(frozen=True)
class SlackApart:
    """The fake Slack running in its own process (``bench.slackapi``), asked over HTTP."""

    base_url: str
    calls_url: str

    async def called(self, http: aiohttp.ClientSession, method: str) -> list[dict[str, Any]]:
        """The parameters of every call of one method the fake has received, in order."""
        async with http.get(self.calls_url, params={"method": method}) as response:
            response.raise_for_status()
            calls: list[dict[str, Any]] = await response.json()
            return calls

    async def counted(self, http: aiohttp.ClientSession, *methods: str) -> dict[str, int]:
        """How many calls of each method the fake has received (cheap: for polling)."""
        url = self.calls_url.removesuffix("/calls") + "/count"
        async with http.get(url, params=[("method", method) for method in methods]) as response:
            response.raise_for_status()
            counts: dict[str, int] = await response.json()
            return counts


@contextlib.asynccontextmanager
async def slack_apart() -> AsyncIterator[SlackApart]:
    """The fake Slack in a process of its own, as Slack's servers are not in the bot's.

    In the bot's process its work (parsing, storing and answering each call) ran on the bot's
    event loop and was counted as the bot's.
    """
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.slackapi", stdin=PIPE, stdout=PIPE
    )
    assert child.stdin is not None
    assert child.stdout is not None
    try:
        async with asyncio.timeout(60):
            base_url, calls_url = (await child.stdout.readline()).decode().split()
        yield SlackApart(base_url, calls_url)
    finally:
        child.stdin.close()
        try:
            async with asyncio.timeout(10):
                await child.wait()
        except TimeoutError:
            child.kill()
            await child.wait()


def settings_for(slack: SlackApi, database_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "slack_bot_token": SecretStr(BOT_TOKEN),
        "slack_signing_secret": SecretStr(SIGNING_SECRET),
        "slack_app_token": None,
        "slack_client_id": None,
        "slack_client_secret": None,
        "countersign_secret": SecretStr(CARD_SECRET),
        "slack_api_url": slack.base_url,
        "database_url": database_url,
        "countersign_model": "offline",
        "countersign_audit_channel": None,
    }
    return Settings(_env_file=None, **{**values, **overrides})  # type: ignore[call-arg,arg-type]


@dataclass
class Served:
    url: str
    runner: web.AppRunner


@contextlib.asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    """Serves an aiohttp application on loopback; yields the URL of Slack's endpoint."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=2048)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/slack/events"
    finally:
        await runner.cleanup()


def bare_bolt(slack: SlackApi) -> web.Application:
    """The baseline: a bolt app whose only listeners ack and do nothing, served the same way."""
    from slack_sdk.web.async_client import AsyncWebClient

    client = AsyncWebClient(token=BOT_TOKEN, base_url=slack.base_url)
    bolt = AsyncApp(signing_secret=SIGNING_SECRET, client=client)

    @bolt.action("card_approve")
    async def _approve(ack: object) -> None:
        await ack()  # type: ignore[operator]

    @bolt.event("app_mention")
    async def _mention() -> None:
        return None

    @bolt.event("message")
    async def _message() -> None:
        return None

    async def endpoint(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await bolt.async_dispatch(await to_bolt_request(request)))

    app = web.Application()
    app.router.add_post("/slack/events", endpoint)
    return app


def flush() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
