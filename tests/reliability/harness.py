"""A bot to break: the real aiohttp endpoint in-process or as `python -m bot serve` subprocesses.

Both shapes talk to a fake Slack workspace on loopback and to a real database; nothing leaves
127.0.0.1. The in-process bot takes any pydantic-ai model (the scripted ones of the injection
tests); the subprocess bot is the product exactly as deployed, to be killed and restarted.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp.test_utils import TestServer
from pydantic import SecretStr
from pydantic_ai.models import Model
from sqlalchemy import text

from bot.agent import Assistant
from bot.sandbox import BOT_TOKEN, Message
from bot.sandbox import WebApi as FakeSlack
from bot.server import application
from bot.services import Services
from bot.settings import Settings
from bot.slack.blocks import APPROVE_VIEW
from tests.support.slack_requests import (
    TEAM,
    block_action,
    event,
    form,
    message,
    signed,
    view_submission,
)
from tools import AuditLog, CardSigner, CardStore, ProcessLease, Registry
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry

ROOT = Path(__file__).resolve().parents[2]
SIGNING_SECRET = "reliability-signing-secret-0123"
CARD_SECRET = "reliability-card-secret-0123456789"
CHANNEL = "C0OPS"

# Slack user → (name, email): the four Fiesta Foods people and Sam Lee of Harbor Books.
PEOPLE = {
    "UPRIYA": ("Priya Raman", "priya@fiesta.example"),
    "UARJUN": ("Arjun Mehta", "arjun@fiesta.example"),
    "UMEERA": ("Meera Iyer", "meera@fiesta.example"),
    "URAVI": ("Ravi Kumar", "ravi@fiesta.example"),
    "USAM": ("Sam Lee", "sam@harbor.example"),
}

# Tables the engine writes for every inbound request it acts on.
ENGINE_TABLES = ("audit_log", "proposals", "receipts", "conversations", "identities")


async def workspace() -> FakeSlack:
    fake = FakeSlack(team_id=TEAM)
    for user, (name, email) in PEOPLE.items():
        fake.add_user(user, name, email)
    return await fake.start()


# Sam works in Harbor Books' own workspace, which the demo connects to Harbor Books.
HOME_TEAMS = {"USAM": "T0HARBOR"}


async def link_everyone(db: Database) -> None:
    directory = Directory(db)
    for user, (_name, email) in PEOPLE.items():
        await directory.link("slack", HOME_TEAMS.get(user, TEAM), user, email)


async def count_rows(db: Database, tables: Sequence[str] = ENGINE_TABLES) -> dict[str, int]:
    """How many rows each table holds, read outside any tool."""
    counts: dict[str, int] = {}
    async with db.session() as session:
        for table in tables:
            # Table names come from the constant tuples of this module, never from input.
            counts[table] = int(await session.scalar(text(f"SELECT count(*) FROM {table}")) or 0)
    return counts


def settings_for(slack: FakeSlack, database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
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
        **overrides,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def actions_of(blocks: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    return next((b for b in blocks if b.get("type") == "actions"), None)


def press_payload(
    user: str, card: Message, *, value: str | None = None, action: str = "card_approve"
) -> dict[str, Any]:
    """A block_actions press of a card's button, its value replaced when ``value`` is given."""
    block = actions_of(card.blocks)
    assert block is not None, "the message has no buttons"
    button = next(e for e in block["elements"] if e["action_id"] == action)
    return block_action(
        user,
        action_id=action,
        value=button["value"] if value is None else value,
        block_id=block["block_id"],
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
    )


def signed_form(payload: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    body = form(payload)
    return body.encode(), signed(
        body, SIGNING_SECRET, content_type="application/x-www-form-urlencoded"
    )


def signed_event(inner: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(event(inner))
    return body.encode(), signed(body, SIGNING_SECRET, content_type="application/json")


# How long a condition may take on a loaded machine (CI shares two cores with other suites):
# the waits below poll a condition, so a generous deadline costs nothing when things are quick.
PATIENCE = 120.0


async def wait_until(
    check: Callable[[], Awaitable[bool]], *, seconds: float = PATIENCE, what: str
) -> None:
    """Polls ``check`` until it holds; fails naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


@dataclass
class InProcessBot:
    """The bot's aiohttp application on loopback, with its surface reachable by the test."""

    slack: FakeSlack
    server: TestServer
    http: aiohttp.ClientSession
    services: Services
    _ts: int = 0

    @property
    def registry(self) -> Registry:
        return self.services.registry

    @property
    def card_store(self) -> CardStore:
        """The engine's card store, read straight from the database (the registry keeps its own)."""
        return CardStore(self.services.db)

    @property
    def audit(self) -> AuditLog:
        """The engine's audit log, read straight from the database."""
        return AuditLog(self.services.db)

    def ts(self) -> str:
        self._ts += 1
        return f"1800000000.{self._ts:06d}"

    async def post(self, body: bytes, headers: dict[str, str]) -> int:
        async with self.http.post(
            self.server.make_url("/slack/events"), data=body, headers=headers
        ) as response:
            await response.read()
            return response.status

    async def settle(self) -> None:
        """Waits until the work started by earlier requests (after their acks) has finished."""
        # Bolt runs the listeners before it answers, so the work they started is in the task
        # set by now; waiting for it to empty is a condition, not a guess at how long it takes.
        await self.services.tasks.idle()

    async def mention(self, user: str, words: str) -> str:
        ts = self.ts()
        inner = message(user, f"<@UBOT> {words}", channel=CHANNEL, ts=ts, kind="app_mention")
        assert await self.post(*signed_event(inner)) == 200
        await self.settle()
        return ts

    async def press(self, user: str, card: Message, *, value: str | None = None) -> int:
        """Presses Approve and, where a channel's card opened its confirm modal, "Yes, approve"."""
        opened = len(self.slack.called("views.open"))
        status = await self.post(*signed_form(press_payload(user, card, value=value)))
        views = [c["view"] for c in self.slack.called("views.open")[opened:]]
        asked = [v for v in views if v.get("callback_id") == APPROVE_VIEW]
        if asked:
            status = await self.post(*signed_form(view_submission(user, asked[-1], values={})))
        await self.settle()
        return status

    def cards(self) -> list[Message]:
        return [m for m in self.slack.messages if actions_of(m.blocks) and not m.ephemeral_to]

    def ephemerals(self, user: str) -> list[str]:
        return [m.text for m in self.slack.messages if m.ephemeral_to == user]


@asynccontextmanager
async def in_process_bot(
    db: Database, slack: FakeSlack, *, model: Model | None = None
) -> AsyncIterator[InProcessBot]:
    """Serves the bot over ``db`` until the block ends; ``model`` replaces the offline model."""
    settings = settings_for(slack, str(db.url.render_as_string(hide_password=False)))
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([CARD_SECRET], ttl=timedelta(minutes=30)), lease=lease)
    await link_everyone(db)
    assistant = Assistant(registry, db, settings, model=model)
    services = Services(registry, assistant, Directory(db), db=db, lease=lease)
    server = TestServer(application(settings, services), host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            yield InProcessBot(slack, server, http, services)
    finally:
        await server.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class ServeProcess:
    """One `python -m bot serve`, exactly as the Procfile runs it, on a port of its own."""

    database_url: str
    slack: FakeSlack
    workdir: Path
    name: str = "serve"
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    # Variables to set (a value) or leave out (None), over the Slack deployment below.
    overrides: dict[str, str | None] = field(default_factory=dict[str, "str | None"])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def environment(self) -> dict[str, str]:
        own = ("SLACK_", "MICROSOFT_", "COUNTERSIGN_")
        keep = {k: v for k, v in os.environ.items() if not k.startswith(own)}
        values = {
            **keep,
            "PYTHONPATH": str(ROOT),
            "DATABASE_URL": self.database_url,
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "COUNTERSIGN_SECRET": CARD_SECRET,
            "SLACK_API_URL": self.slack.base_url,
            "PORT": str(self.port),
            "COUNTERSIGN_HOST": "127.0.0.1",
            "COUNTERSIGN_MODEL": "offline",
            **self.overrides,
        }
        return {k: v for k, v in values.items() if v is not None}

    def launch(self) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as out:
            # The workdir holds no .env, so only the environment above configures the process.
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bot", "serve"],
                cwd=self.workdir,
                env=self.environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return self.process

    async def start(self, http: aiohttp.ClientSession, *, seconds: float = 180) -> ServeProcess:
        """Launches the process and waits until its /healthz answers 200."""
        process = self.launch()
        deadline = time.monotonic() + seconds
        while not await self.healthy(http):
            assert process.poll() is None, f"{self.name} exited:\n{self.log.read_text()}"
            assert time.monotonic() < deadline, f"{self.name} never became healthy"
            await asyncio.sleep(0.1)
        return self

    async def healthy(self, http: aiohttp.ClientSession) -> bool:
        return await self.health(http) == 200

    async def health(self, http: aiohttp.ClientSession) -> int | None:
        try:
            async with http.get(f"{self.url}/healthz", timeout=aiohttp.ClientTimeout(total=3)) as r:
                return r.status
        except (aiohttp.ClientError, TimeoutError):
            return None

    async def post(self, http: aiohttp.ClientSession, body: bytes, headers: dict[str, str]) -> int:
        async with http.post(f"{self.url}/slack/events", data=body, headers=headers) as response:
            await response.read()
            return response.status

    def kill(self) -> None:
        """SIGKILL: no shutdown hook, no drain, nothing flushed."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not stop in time."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
