"""The sandbox keeps its workspace across restarts, so cards pressed after one still update in place."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from aiohttp.test_utils import TestServer

from bot.agent import Assistant
from bot.sandbox import BOT_TOKEN, FIESTA_OPS, Message, Sandbox, start_sandbox
from bot.sandbox.runner import free_port
from bot.sandbox.store import SAVE_AFTER, state_file
from bot.server import application
from bot.services import Services
from tests.sandbox.conftest import CARD_SECRET, SECRET, settings_for
from tools import CardSigner, ProcessLease
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry


@asynccontextmanager
async def running(state: Path, db: Database, database_url: str) -> AsyncIterator[Sandbox]:
    """One `make run`: the sandbox (keeping its workspace in ``state``) and a fresh bot process."""
    sandbox = await start_sandbox(
        host="127.0.0.1",
        port=free_port(),
        bot_events="http://127.0.0.1:9/unset",
        secret=SECRET,
        token=BOT_TOKEN,
        retry_delays=(0.0,),
        state=state,
    )
    settings = settings_for(sandbox.api.base_url, database_url)
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([CARD_SECRET], ttl=timedelta(minutes=30)), lease=lease)
    services = Services(
        registry, Assistant(registry, db, settings), Directory(db), db=db, lease=lease
    )
    bot = TestServer(application(settings, services), host="127.0.0.1")
    await bot.start_server()
    sandbox.acting.delivery.url = str(bot.make_url("/slack/events"))
    sandbox.acting.delivery.timeout = 10.0
    try:
        yield sandbox
    finally:
        await sandbox.acting.drain()
        await services.tasks.drain()
        await bot.close()
        await sandbox.stop()


async def settle(sandbox: Sandbox, until: Callable[[], object]) -> None:
    """Waits (up to 20 s) until ``until()`` holds: the bot answers on its own time."""
    async with asyncio.timeout(20):
        while not until():  # noqa: ASYNC110 (the bot is another server: polling is how we see it)
            await asyncio.sleep(0.05)
    await sandbox.acting.drain()


def cards(sandbox: Sandbox) -> list[Message]:
    return [
        m
        for m in sandbox.api.messages
        if m.channel == FIESTA_OPS and any(b.get("type") == "actions" for b in m.blocks)
    ]


def test_the_state_file_sits_beside_the_sqlite_database(tmp_path: Path) -> None:
    """countersign.db keeps its workspace in .countersign-sandbox.json next to it; in-memory keeps none."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"
    assert state_file(url) == tmp_path / ".countersign-sandbox.json"
    assert state_file("sqlite+aiosqlite://") is None
    assert state_file("sqlite+aiosqlite:///:memory:") is None
    assert state_file("postgresql+asyncpg://u:p@db/shop") == Path(".shop-sandbox.json")


async def test_after_a_restart_the_messages_stay_and_a_card_pressed_from_home_updates(
    tmp_path: Path, db: Database, database_url: str
) -> None:
    """Restarted, the sandbox still shows the question and the card; Approve from Home updates that card."""
    state = tmp_path / ".countersign-sandbox.json"
    async with running(state, db, database_url) as first:
        asked = first.acting.say("UARJUN", FIESTA_OPS, "@countersign approve request 1")
        assert asked is not None
        await settle(first, lambda: cards(first))
        first.acting.open_home("UARJUN")
        await settle(first, lambda: "UARJUN" in first.api.workspace.homes)
        [card] = cards(first)
        home = first.api.workspace.homes["UARJUN"]
        await asyncio.sleep(SAVE_AFTER * 2)
    assert json.loads(state.read_text())["messages"]

    async with running(state, db, database_url) as second:
        assert second.api.message(FIESTA_OPS, asked.ts).text == "<@UBOT> approve request 1"
        assert second.api.message(FIESTA_OPS, card.ts).blocks == card.blocks
        assert second.api.workspace.homes["UARJUN"] == home
        actions = next(
            b
            for b in home["blocks"]
            if b.get("type") == "actions"
            and any(e.get("action_id") == "card_approve" for e in b["elements"])
        )
        outcome = await second.acting.press(
            "UARJUN", action_id="card_approve", block_id=actions["block_id"]
        )
        assert outcome.ok
        answered = next(m for m in second.api.messages if m.text.startswith("Not done yet"))
        await settle(
            second,
            lambda: (
                second.api.message(FIESTA_OPS, card.ts).blocks[0]["text"]["text"]
                == "Approved and done"
                and second.api.message(FIESTA_OPS, answered.ts).text == "Done: see the card below."
            ),
        )
        updates = [c.params for c in second.api.calls if c.method == "chat.update"]
        # The card, and the answer above it, which now says the card is done.
        assert updates and {u["ts"] for u in updates} == {card.ts, answered.ts}
        later = second.api.workspace.next_ts()
        assert later.partition(".")[2] > max(m.ts.partition(".")[2] for m in first.api.messages)
