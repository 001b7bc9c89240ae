"""The bot's web application in the bench's process (endpoint, bolt, offline model); a way to hit it.

The application is the production one, served on loopback from the bench's own event loop, so
a bench can look inside it (its surface, its task lanes, the fake Slack beside it); the burst
runs ``python -m bot serve`` as its own process tree instead (``bench.production``).

Requests are built and signed exactly as Slack sends them, then fired concurrently from a
separate process; each request's time runs from just before it is sent to the end of its
response, which is what Slack's 3-second acknowledgement clock measures.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import aiohttp
from slack_sdk.web.async_client import AsyncWebClient

from bench.stage import (
    CARD_SECRET,
    PEOPLE,
    SlackApi,
    fake_slack,
    serve,
    settings_for,
)
from bot.agent import Assistant
from bot.sandbox import BOT_TOKEN, WebApi
from bot.server import application
from bot.services import Background, Services
from tests.support.slack_requests import TEAM, form
from tools import CardSigner, CardStore, ProcessLease, Registry
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry

__all__ = ["Request", "RunningBot", "fire", "running_bot"]

_DRAIN_LIMIT_S = 300.0


@dataclass(frozen=True, slots=True)
class Request:
    """One signed Slack request: its body and content type (headers are signed when sent)."""

    body: str
    content_type: str

    @classmethod
    def interaction(cls, payload: dict[str, object]) -> Request:
        return cls(form(payload), "application/x-www-form-urlencoded")

    @classmethod
    def event(cls, envelope: dict[str, object]) -> Request:
        return cls(json.dumps(envelope), "application/json")


@dataclass
class RunningBot:
    """The bot, with the fake Slack in this process (benches that look inside the fake)."""

    slack: WebApi
    services: Services
    registry: Registry
    client: AsyncWebClient
    url: str

    @property
    def card_store(self) -> CardStore:
        """The engine's card store, read straight from the database (the registry keeps its own)."""
        return CardStore(self.services.db)

    async def drain(self) -> None:
        """Waits (bounded) for every task the acks started: approvals, answers."""
        await _drain(self.services)


async def _drain(services: Services) -> None:
    # ``idle`` rather than ``drain``, which cancels work still running after its shutdown
    # grace period; a burst legitimately takes longer than that.
    async with asyncio.timeout(_DRAIN_LIMIT_S):
        await services.tasks.idle()


@contextlib.asynccontextmanager
async def running_bot(
    database_url: str, http: aiohttp.ClientSession, **overrides: object
) -> AsyncIterator[RunningBot]:
    """The real web application over ``database_url``, talking to a fake Slack; people linked.

    ``overrides`` are settings (a model other than the offline one, say).
    """
    async with (
        fake_slack() as slack,
        _serving(slack, database_url, **overrides) as (services, registry, url),
    ):
        client = AsyncWebClient(token=BOT_TOKEN, base_url=slack.base_url, session=http)
        yield RunningBot(slack, services, registry, client, url)


@contextlib.asynccontextmanager
async def _serving(
    slack: SlackApi, database_url: str, **overrides: object
) -> AsyncIterator[tuple[Services, Registry, str]]:
    settings = settings_for(slack, database_url, **overrides)
    db = Database(database_url)
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([CARD_SECRET]), lease=lease)
    directory = Directory(db)
    for user, (_name, email) in PEOPLE.items():
        await directory.link("slack", TEAM, user, email)
    # The lanes as the production composition root sizes them (``bot.server.build_services``).
    lanes = Background(
        turns=settings.countersign_turn_limit, presses=settings.countersign_press_limit
    )
    services = Services(
        registry,
        Assistant(registry, db, settings),
        directory,
        db=db,
        lease=lease,
        tasks=lanes,
        typing_after=settings.countersign_typing_after,
    )
    try:
        async with serve(application(settings, services)) as url:
            yield services, registry, url
    finally:
        await db.dispose()


async def fire(http: aiohttp.ClientSession, url: str, requests: Sequence[Request]) -> list[float]:
    """Sends every request at once from a separate process (``bench.loadgen``).

    Returns each request's seconds to a complete 200 response. ``http`` is unused by the
    sender; it stays in the signature so callers keep one session for their own calls.
    """
    order = json.dumps({"url": url, "requests": [[r.body, r.content_type] for r in requests]})
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.loadgen", stdin=PIPE, stdout=PIPE, stderr=PIPE
    )
    async with asyncio.timeout(_DRAIN_LIMIT_S):
        out, err = await child.communicate(order.encode())
    if child.returncode != 0:
        raise RuntimeError(f"the load generator failed: {err.decode()[-2000:]}")
    timings: list[float] = json.loads(out)
    return timings


def client_session() -> aiohttp.ClientSession:
    """A client with no cap on connections, so a burst really is concurrent."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, force_close=True))
