"""Real `python -m bot serve` processes on one PostgreSQL: killed mid-write, and two side by side."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from bot.sandbox import Message
from bot.sandbox import WebApi as FakeSlack
from bot.sandbox.payloads import view_submission
from bot.slack.blocks import APPROVE_VIEW
from tests.reliability.harness import (
    CHANNEL,
    ServeProcess,
    link_everyone,
    press_payload,
    signed_event,
    signed_form,
    wait_until,
)
from tests.support.slack_requests import message
from tools.db import Database
from tools.keeping.reconcile import INTERRUPTED_NOTE

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("backend", ["postgresql"], indirect=True)]


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def _raw(database_url: str) -> asyncpg.Connection:
    return await asyncpg.connect(database_url.replace("+asyncpg", ""))


async def _fetch(database_url: str, sql: str, *args: object) -> object:
    conn = await _raw(database_url)
    try:
        return await conn.fetchval(sql, *args)
    finally:
        await conn.close()


async def _post_card(
    serve: ServeProcess, http: aiohttp.ClientSession, slack: FakeSlack, words: str, ts: str
) -> Message:
    """Asks one process for a card as Arjun and returns it once the fake Slack holds it."""
    known = {m.ts for m in slack.messages}
    inner = message("UARJUN", f"<@UBOT> {words}", channel=CHANNEL, ts=ts, kind="app_mention")
    assert await serve.post(http, *signed_event(inner)) == 200

    async def posted() -> bool:
        return any(m.blocks and m.ts not in known and _has_buttons(m) for m in slack.messages)

    await wait_until(posted, what=f"a card for {words!r}")
    return next(m for m in slack.messages if m.ts not in known and _has_buttons(m))


async def _confirm_modal(
    process: ServeProcess, http: aiohttp.ClientSession, slack: FakeSlack, card: Message
) -> dict[str, Any]:
    """Arjun's Approve on a channel's card, and the confirm modal it opens (its submission is
    the press)."""
    opened = len(slack.called("views.open"))
    assert await process.post(http, *signed_form(press_payload("UARJUN", card))) == 200

    async def asked() -> bool:
        return any(
            c["view"].get("callback_id") == APPROVE_VIEW
            for c in slack.called("views.open")[opened:]
        )

    await wait_until(asked, what="the Approve confirm modal")
    return next(
        c["view"]
        for c in reversed(slack.called("views.open"))
        if c["view"].get("callback_id") == APPROVE_VIEW
    )


def _yes(view: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """Arjun's "Yes, approve" in the confirm modal, signed as Slack sends it."""
    return signed_form(view_submission("UARJUN", view, values={}))


def _only_answers_edited(slack: FakeSlack, edited: set[str]) -> None:
    """Besides the cards, only the answers above them were edited, each to say what became of
    its card (never left reading "Not done yet")."""
    for ts in edited:
        answer = slack.message(CHANNEL, ts)
        assert not _has_buttons(answer) and not answer.text.startswith("Not done yet"), answer


def _has_buttons(m: Message) -> bool:
    return any(b.get("type") == "actions" for b in m.blocks)


async def test_killed_mid_write_is_settled_and_posted_on_restart(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """SIGKILL while the write waits on a row lock: restart marks the card interrupted and posts it; nothing written."""
    await link_everyone(db)
    first = await ServeProcess(database_url, slack, tmp_path, name="first").start(http)
    locker = await _raw(database_url)
    try:
        card = await _post_card(first, http, slack, "approve request 3", "1800000000.000001")
        card_id = str(await _fetch(database_url, "SELECT id FROM proposals"))
        # Holding the request's row makes the approval wait inside execute, after its
        # "approved / executing" audit line is committed: exactly the window to kill it in.
        await locker.execute("BEGIN")
        await locker.execute("SELECT * FROM branch_requests WHERE id = 3 FOR UPDATE")
        view = await _confirm_modal(first, http, slack, card)
        assert await first.post(http, *_yes(view)) == 200

        async def executing() -> bool:
            last = await _fetch(
                database_url,
                "SELECT outcome || '/' || detail FROM audit_log WHERE card_id = $1 "
                "ORDER BY id DESC LIMIT 1",
                card_id,
            )
            return last == "approved/executing"

        await wait_until(executing, what="the 'approved / executing' audit line")
        first.kill()
    finally:
        first.kill()
        await locker.close()  # releases the lock only once the process is gone

    calls = len(slack.calls)
    second = ServeProcess(database_url, slack, tmp_path, name="second")
    try:
        await second.start(http)

        async def posted() -> bool:
            return any(c.method == "chat.postMessage" for c in slack.calls[calls:])

        await wait_until(posted, what="the reconciler's post in the channel")
    finally:
        second.stop()

    later = slack.calls[calls:]
    updated = [c.params["ts"] for c in later if c.method == "chat.update"]
    assert updated.count(card.ts) == 1
    _only_answers_edited(slack, set(updated) - {card.ts})
    [audit] = [c.params for c in later if c.method == "chat.postMessage"]
    assert audit["channel"] == CHANNEL and INTERRUPTED_NOTE in audit["text"]
    assert "Interrupted" in json.dumps(slack.message(CHANNEL, card.ts).blocks)
    sql = "SELECT status FROM proposals WHERE id = $1"
    assert await _fetch(database_url, sql, card_id) == "interrupted"
    assert (
        await _fetch(database_url, "SELECT status FROM branch_requests WHERE id = 3") == "pending"
    )
    assert (
        await _fetch(database_url, "SELECT decided_card_id FROM branch_requests WHERE id = 3")
        is None
    )


async def test_two_processes_share_cards_and_execute_once(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """A card posted by one process is approved through the other; 100 presses across both execute once."""
    await link_everyone(db)
    one = ServeProcess(database_url, slack, tmp_path, name="one")
    two = ServeProcess(database_url, slack, tmp_path, name="two")
    try:
        await asyncio.gather(one.start(http), two.start(http))
        card = await _post_card(one, http, slack, "approve request 3", "1800000000.000001")
        view = await _confirm_modal(two, http, slack, card)
        assert await two.post(http, *_yes(view)) == 200
        done = "SELECT status FROM branch_requests WHERE id = 3"

        async def approved() -> bool:
            return await _fetch(database_url, done) == "approved"

        await wait_until(approved, what="the approval through the other process")

        contested = await _post_card(one, http, slack, "approve request 6", "1800000000.000002")
        view = await _confirm_modal(one, http, slack, contested)
        statuses = await asyncio.gather(
            *((one if i % 2 else two).post(http, *_yes(view)) for i in range(100))
        )
        assert statuses == [200] * 100

        async def all_answered() -> bool:
            return len([m for m in slack.messages if m.ephemeral_to == "UARJUN"]) >= 99

        await wait_until(all_answered, what="99 'already decided' answers")
    finally:
        one.stop()
        two.stop()

    card_id = await _fetch(database_url, "SELECT decided_card_id FROM branch_requests WHERE id = 6")
    assert (
        await _fetch(database_url, "SELECT status FROM proposals WHERE id = $1", card_id) == "done"
    )
    outcomes = "SELECT count(*) FROM audit_log WHERE card_id = $1 AND outcome = $2"
    assert await _fetch(database_url, outcomes, card_id, "done") == 1
    assert await _fetch(database_url, outcomes, card_id, "refused") == 99
    told = [m.text for m in slack.messages if m.ephemeral_to == "UARJUN"]
    assert len(told) == 99 and all("already approved by Arjun Mehta" in t for t in told), told[:3]
    updates = [c.params for c in slack.calls if c.method == "chat.update"]
    updated = [u["ts"] for u in updates]
    assert updated.count(card.ts) == 1 and updated.count(contested.ts) == 1
    _only_answers_edited(slack, set(updated) - {card.ts, contested.ts})


async def test_teams_only_process_starts_and_refuses_unsigned_activities(
    database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """`serve` with only Teams settings starts (it used to exit with bolt's traceback asking for
    SLACK_BOT_TOKEN): /healthz is 200, an activity without a Bot Framework token is 401."""
    teams_only: dict[str, str | None] = {
        "SLACK_BOT_TOKEN": None,
        "SLACK_SIGNING_SECRET": None,
        "SLACK_API_URL": None,
        "MICROSOFT_APP_ID": "00000000-0000-0000-0000-00000000b07a",
        "MICROSOFT_APP_PASSWORD": "not-a-real-secret",
    }
    serve = ServeProcess(database_url, slack, tmp_path, name="teams", overrides=teams_only)
    try:
        await serve.start(http)
        activity = {"type": "message", "text": "branches", "serviceUrl": "http://127.0.0.1:1/"}
        async with http.post(f"{serve.url}/api/messages", json=activity) as response:
            assert response.status == 401
        async with http.post(f"{serve.url}/slack/events", data=b"{}") as response:
            assert response.status == 404
    finally:
        serve.stop()
    assert "Traceback" not in serve.log.read_text()
