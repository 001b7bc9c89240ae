"""The stack `make run` starts — `countersign sandbox` in a subprocess on a temp SQLite — and a headless Chromium.

``alone`` is the sandbox by itself in the test's process instead, for pinning the page's own
behaviour: the test posts as the app through its Web API, and a stand-in for the bot keeps the
presses it is sent.

One Chromium serves the whole run, and each test gets a fresh context of its own in it (no
cookies, storage or cache of another test). Playwright's objects belong to the event loop that
made them, so every test here, and the async fixtures it uses, run in the session's loop.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox import BOT_TOKEN, Sandbox, start_sandbox

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
_SETTINGS_PREFIXES = ("SLACK_", "COUNTERSIGN_", "OPENAI_", "ANTHROPIC_")
_START_WAIT = 120.0
_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Runs this folder's tests in the session's event loop, where the one browser lives; and
    each file on one xdist worker, so its sandbox (module-scoped) starts once."""
    in_session_loop = pytest.mark.asyncio(loop_scope="session")
    for item in items:
        if item.path.parent != _HERE:
            continue
        item.add_marker(pytest.mark.xdist_group(f"browser-{item.path.stem}"))
        if pytest_asyncio.is_async_test(item):
            item.add_marker(in_session_loop, append=False)


@dataclass
class Running:
    """The running `countersign sandbox`: the page's URL and the database it writes."""

    url: str
    database: Path
    process: subprocess.Popen[str]

    def request_status(self, request_id: int) -> str:
        with sqlite3.connect(self.database) as conn:
            row = conn.execute(
                "SELECT status FROM branch_requests WHERE id = ?", (request_id,)
            ).fetchone()
        return str(row[0])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    found: list[str] = []
    reader = threading.Thread(
        target=lambda: found.append(process.stdout.readline() if process.stdout else "")
    )
    reader.start()
    reader.join(timeout)
    return found[0] if found else ""


@contextmanager
def launch(home: Path, port: int) -> Iterator[Running]:
    """`python -m bot sandbox` in ``home`` on ``port``, nothing configured, until stopped with Ctrl-C."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make deps` (apt-get install chromium)")
    database = home / "countersign.db"
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(_SETTINGS_PREFIXES)}
    env |= {"DATABASE_URL": f"sqlite+aiosqlite:///{database}", "PORT": str(port)}
    env.pop("LOG_LEVEL", None)
    with (
        (home / "stderr.log").open("a") as log,
        subprocess.Popen(
            [sys.executable, "-m", "bot", "sandbox"],
            cwd=home,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=log,
        ) as process,
    ):
        line = _first_line(process, _START_WAIT)
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        if not found:
            process.kill()
            pytest.fail(f"the sandbox did not start: {line!r} {(home / 'stderr.log').read_text()}")
        try:
            yield Running(found.group(0), database, process)
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=60)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """`python -m bot sandbox` with nothing configured, as `make run` runs it."""
    with launch(tmp_path_factory.mktemp("sandbox"), free_port()) as running:
        yield running


Json = dict[str, Any]
_ALONE_SECRET = "signing-secret-of-the-sandbox-alone"


@dataclass
class Alone:
    """The sandbox with no bot: its Web API as the app's client, and the presses and events it
    delivered."""

    sandbox: Sandbox
    client: AsyncWebClient
    presses: list[Json] = field(default_factory=list)
    events: list[Json] = field(default_factory=list)
    # What the stand-in does with a press before answering it (the bot would update the card).
    on_press: Callable[[Json], Awaitable[None]] | None = None

    @property
    def url(self) -> str:
        return self.sandbox.url


@pytest_asyncio.fixture(loop_scope="session")
async def alone() -> AsyncIterator[Alone]:
    """The sandbox in this process with a stand-in for the bot that checks each delivery's signature."""
    verifier = SignatureVerifier(_ALONE_SECRET)
    holder: list[Alone] = []

    async def events(request: web.Request) -> web.Response:
        body = await request.text()
        if not verifier.is_valid_request(body, dict(request.headers)):
            return web.Response(status=401)
        if request.content_type == "application/json":  # an Events API envelope
            holder[0].events.append(json.loads(body))
            return web.Response(status=200)
        payload = json.loads(parse_qs(body)["payload"][0])
        holder[0].presses.append(payload)
        if holder[0].on_press is not None:
            await holder[0].on_press(payload)
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/slack/events", events)
    bot = TestServer(app, host="127.0.0.1")
    await bot.start_server()
    sandbox = await start_sandbox(
        host="127.0.0.1",
        port=free_port(),
        bot_events=str(bot.make_url("/slack/events")),
        secret=_ALONE_SECRET,
        token=BOT_TOKEN,
        retry_delays=(),
    )
    try:
        async with aiohttp.ClientSession() as session:
            client = AsyncWebClient(token=BOT_TOKEN, base_url=sandbox.api.base_url, session=session)
            holder.append(Alone(sandbox, client))
            yield holder[0]
    finally:
        await sandbox.stop()
        await bot.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def chromium() -> AsyncIterator[Browser]:
    """One headless Chromium for the run (never a downloaded browser), on a fresh profile."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make deps` (apt-get install chromium)")
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=ARGS, headless=True
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="session")
async def browser(chromium: Browser) -> AsyncIterator[BrowserContext]:
    """A fresh context in the shared Chromium: nothing of another test's pages, storage or cache."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    context = await chromium.new_context(
        viewport={"width": 1280, "height": 800}, device_scale_factor=1
    )
    context.set_default_timeout(20_000)
    try:
        yield context
    finally:
        await context.close()


async def confirm_approve(page: Page, title: str | None = None) -> None:
    """Says "Yes, approve": in the dialog a private copy's button draws, or in the modal a
    press on a channel's card opens (Slack draws a button's dialog for whoever presses it)."""
    dialog, modal = page.locator("#confirm-root .dialog"), page.locator("#modal-root .dialog")
    await expect(dialog.or_(modal).first).to_be_visible()
    if title is not None:
        heading = page.locator("#confirm-root .dialog-title, #modal-root .dialog-title")
        await expect(heading).to_have_text(title)
    await page.click("#confirm-ok" if await dialog.is_visible() else "#modal-submit")


async def settled(page: Page) -> None:
    """Waits until the running animations end (an updated message's highlight fades), for a picture."""
    # Not wait_for_function: its polled predicate is an eval, which the page's CSP refuses.
    await page.evaluate("Promise.allSettled(document.getAnimations().map((a) => a.finished))")


async def open_as(context: BrowserContext, url: str, person: str) -> Page:
    """The sandbox page, acting as ``person``, once its live feed is connected."""
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"{url}/?as={person}")
    await page.wait_for_selector("body[data-live='yes']")
    await page.wait_for_selector(f"body[data-as='{person}']")
    assert errors == []
    return page
