"""PostgreSQL goes away under an approval: the presser is told, nothing is half-written, the bot recovers."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp.test_utils import TestServer
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration

from bot.agent import Assistant
from bot.sandbox import WebApi as FakeSlack
from bot.server import application
from bot.services import Services
from tests.reliability.harness import (
    CARD_SECRET,
    CHANNEL,
    PATIENCE,
    InProcessBot,
    count_rows,
    in_process_bot,
    press_payload,
    settings_for,
    signed_form,
    wait_until,
)
from tests.support.fake_connector import Call, FakeConnector
from tests.support.postgres import PostgresCluster
from tests.support.slack_requests import view_submission
from tests.support.teams_activities import TENANT, invoke, message
from tests.teams.adaptive import texts
from tests.teams.conftest import ARJUN, MEMBERS
from tools import CardSigner, CardStatus, ProcessLease
from tools.db import Database
from tools.db.migrate import upgrade_async
from tools.keeping.reconcile import INTERRUPTED_NOTE
from tools.people.connections import Platform
from tools.people.directory import Directory
from tools.toolsets.merchant import build_registry
from tools.toolsets.merchant.demo import FIESTA, load_demo

pytestmark = pytest.mark.slow
_names = itertools.count()


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    """A cluster of this module's own: stopping it must not take other tests' databases away."""
    own = PostgresCluster.start()
    try:
        yield own
    finally:
        own.stop()


@pytest.fixture
async def db(cluster: PostgresCluster) -> AsyncIterator[Database]:
    name = f"outage_{next(_names)}"
    conn = await asyncpg.connect(cluster.url().replace("+asyncpg", ""))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    await upgrade_async(cluster.url(name))
    database = Database(cluster.url(name))
    await load_demo(database)
    try:
        yield database
    finally:
        await database.dispose()


async def _raw(db: Database) -> asyncpg.Connection:
    return await asyncpg.connect(db.url.set(drivername="postgresql").render_as_string(False))


async def _status(db: Database, table: str, row_id: int | str) -> str:
    conn = await _raw(db)
    try:
        # Table names are the literals of the tests below, never input.
        return str(await conn.fetchval(f"SELECT status FROM {table} WHERE id = $1", row_id))
    finally:
        await conn.close()


async def _health(bot: InProcessBot) -> int:
    async with bot.http.get(bot.server.make_url("/healthz")) as response:
        return response.status


async def _card(bot: InProcessBot) -> tuple[str, str]:
    await bot.mention("UARJUN", "approve request 3")
    [card] = bot.cards()
    proposal = (await bot.card_store.rows())[0]
    return card.ts, proposal.id


def _told_database(bot: InProcessBot) -> list[str]:
    return [text for text in bot.ephemerals("UARJUN") if "database" in text]


async def test_press_while_the_database_is_down_is_answered_and_retried_later(
    db: Database, cluster: PostgresCluster, slack: FakeSlack
) -> None:
    """Database stopped at the press: the presser is told, the card stays pending, a press after it returns works."""
    async with in_process_bot(db, slack) as bot:
        card_ts, card_id = await _card(bot)
        before = await count_rows(db)
        await asyncio.to_thread(cluster.pause)
        try:
            assert await bot.press("UARJUN", slack.message(CHANNEL, card_ts)) == 200
            assert await _health(bot) == 503
            assert len(_told_database(bot)) == 1, bot.ephemerals("UARJUN")
        finally:
            await asyncio.to_thread(cluster.resume)
        await wait_until(lambda: _healthy(bot), what="/healthz back to 200")

        assert await count_rows(db) == before  # the refused press wrote nothing, not even half
        assert await _status(db, "proposals", card_id) == CardStatus.PENDING
        assert await _status(db, "branch_requests", 3) == "pending"

        assert await bot.press("UARJUN", slack.message(CHANNEL, card_ts)) == 200
        assert await _status(db, "proposals", card_id) == CardStatus.DONE
        assert await _status(db, "branch_requests", 3) == "approved"
        assert "Approved and done" in str(slack.message(CHANNEL, card_ts).blocks)


async def test_a_message_while_the_database_is_down_is_answered(
    db: Database, cluster: PostgresCluster, slack: FakeSlack
) -> None:
    """Database stopped as a mention arrives: its delivery could not even be recorded, and the
    turn used to end in a logged traceback and silence (Slack, acknowledged, never resends
    it). Now the thread is told, and asked to send it again."""
    async with in_process_bot(db, slack) as bot:
        await asyncio.to_thread(cluster.pause)
        try:
            ts = await bot.mention("UARJUN", "approve request 3")
        finally:
            await asyncio.to_thread(cluster.resume)
        replies = [m.text for m in slack.thread(CHANNEL, ts) if not m.ephemeral_to]
        assert len(replies) == 1, replies
        assert "couldn't reach my database" in replies[0]
        assert "send it again" in replies[0]
        await wait_until(lambda: _healthy(bot), what="/healthz back to 200")


async def _healthy(bot: InProcessBot) -> bool:
    return await _health(bot) == 200


async def test_database_lost_during_the_write_is_told_and_reconciled_on_restart(
    db: Database, cluster: PostgresCluster, slack: FakeSlack
) -> None:
    """Database stopped while the write waits on a row lock: presser told, nothing written, restart posts 'interrupted'."""
    async with in_process_bot(db, slack) as bot:
        card_ts, card_id = await _card(bot)
        locker = await _raw(db)
        await locker.execute("BEGIN")
        await locker.execute("SELECT * FROM branch_requests WHERE id = 3 FOR UPDATE")
        try:
            assert await bot.post(*_press_of(slack, card_ts)) == 200
            # The channel's card asks its confirm in a modal: his "Yes, approve" is the press.
            [opened] = [c.params["view"] for c in slack.calls if c.method == "views.open"]
            assert await bot.post(*signed_form(view_submission("UARJUN", opened, values={}))) == 200

            async def executing() -> bool:
                return await _status(db, "proposals", card_id) == CardStatus.EXECUTING

            await wait_until(executing, what="the approval to reach its write")
            await asyncio.to_thread(cluster.pause)
            await asyncio.wait_for(bot.settle(), timeout=PATIENCE)
            assert len(_told_database(bot)) == 1, bot.ephemerals("UARJUN")
        finally:
            locker.terminate()
            if cluster.process is None or cluster.process.poll() is not None:
                await asyncio.to_thread(cluster.resume)
        assert await _status(db, "branch_requests", 3) == "pending"

    # A process starting on the database settles the card and shows it in the channel.
    calls = len(slack.calls)
    async with in_process_bot(db, slack):

        async def posted() -> bool:
            return any(c.method == "chat.postMessage" for c in slack.calls[calls:])

        await wait_until(posted, what="the reconciler's post")
    assert await _status(db, "proposals", card_id) == CardStatus.INTERRUPTED
    assert await _status(db, "branch_requests", 3) == "pending"
    # The card, once (the answer above it is edited too, to say it was interrupted).
    updated = [
        c.params
        for c in slack.calls[calls:]
        if c.method == "chat.update" and c.params["ts"] == card_ts
    ]
    assert len(updated) == 1
    assert "Interrupted" in str(updated[0]["blocks"])
    [audit] = [c.params for c in slack.calls[calls:] if c.method == "chat.postMessage"]
    assert INTERRUPTED_NOTE in audit["text"]


def _press_of(slack: FakeSlack, card_ts: str) -> tuple[bytes, dict[str, str]]:
    return signed_form(press_payload("UARJUN", slack.message(CHANNEL, card_ts)))


@dataclass
class TeamsBot:
    """Teams mounted in-process over the module's database, answering through a fake connector."""

    server: TestServer
    connector: FakeConnector
    services: Services
    http: aiohttp.ClientSession

    async def post(self, activity: dict[str, Any]) -> tuple[int, Any]:
        """POSTs an activity; returns once the work it started (a message's turn) is done."""
        url = self.server.make_url("/api/messages")
        async with self.http.post(url, json=activity) as response:
            text = await response.text()
            status, body = response.status, json.loads(text) if text else None
        await self.services.tasks.idle()
        return status, body

    async def press(self, card: Call) -> tuple[int, Any]:
        data = {**card.cards[0]["refresh"]["action"]["data"], "verb": "approve"}
        url = self.connector.url
        return await self.post(
            invoke(ARJUN, "approve", data, service_url=url, reply_to=str(card.created))
        )


@asynccontextmanager
async def teams_bot(db: Database, slack: FakeSlack) -> AsyncIterator[TeamsBot]:
    connector = FakeConnector()
    for member in MEMBERS:
        connector.add(member)
    await connector.start()
    settings = settings_for(slack, str(db.url.render_as_string(hide_password=False)))
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([CARD_SECRET], ttl=timedelta(minutes=30)), lease=lease)
    directory = Directory(db)
    await directory.connections.connect(Platform.TEAMS, TENANT, FIESTA)
    services = Services(registry, Assistant(registry, db, settings), directory, db=db, lease=lease)
    anonymous = AgentAuthConfiguration(anonymous_allowed=True)
    server = TestServer(application(settings, services, teams_auth=anonymous), host="127.0.0.1")
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            yield TeamsBot(server, connector, services, http)
    finally:
        await server.close()
        await connector.stop()


async def test_teams_press_while_the_database_is_down_is_answered_and_retried_later(
    db: Database, cluster: PostgresCluster, slack: FakeSlack
) -> None:
    """Teams, database stopped at the press: the invoke answers with a card telling the presser,
    nothing is written, and a press after the database returns approves."""
    async with teams_bot(db, slack) as bot:
        asked = message(ARJUN, "approve request 3", service_url=bot.connector.url)
        assert (await bot.post(asked))[0] == 202
        [card] = bot.connector.card_posts()
        before = await count_rows(db)
        await asyncio.to_thread(cluster.pause)
        try:
            status, body = await bot.press(card)
            assert status == 200
            assert "couldn't reach my database" in texts(body["value"])
        finally:
            await asyncio.to_thread(cluster.resume)

        async def healthy() -> bool:
            async with bot.http.get(bot.server.make_url("/healthz")) as response:
                return response.status == 200

        await wait_until(healthy, what="/healthz back to 200")
        assert await count_rows(db) == before
        assert bot.connector.updates() == []

        status, body = await bot.press(card)
        assert status == 200
        assert await _status(db, "branch_requests", 3) == "approved"
        assert "Approved and done" in texts(bot.connector.updates()[-1].cards[0])


async def test_reject_and_edit_pressed_while_the_database_is_down_are_answered(
    db: Database, cluster: PostgresCluster, slack: FakeSlack
) -> None:
    """Database stopped as Reject or Edit is pressed: each reads the card to open its form
    before the ack goes out, and each answered Slack 500 (three in a soak). Now both are
    acknowledged and the presser is told, privately, to press again."""
    async with in_process_bot(db, slack) as bot:
        card_ts, _ = await _card(bot)
        card = slack.message(CHANNEL, card_ts)
        await asyncio.to_thread(cluster.pause)
        try:
            for action in ("card_reject", "card_edit"):
                payload = press_payload("UARJUN", card, action=action)
                assert await bot.post(*signed_form(payload)) == 200
            await bot.settle()
            assert len(_told_database(bot)) == 2, bot.ephemerals("UARJUN")
        finally:
            await asyncio.to_thread(cluster.resume)
        await wait_until(lambda: _healthy(bot), what="/healthz back to 200")


async def test_an_edit_submitted_while_the_database_is_down_is_a_503(
    db: Database, cluster: PostgresCluster, slack: FakeSlack
) -> None:
    """An edit is checked before its form is answered, so with the database stopped it cannot
    be: like /healthz, the answer is a 503 saying when to try again, not a 500."""
    async with in_process_bot(db, slack) as bot:
        card_ts, _ = await _card(bot)
        payload = press_payload("UARJUN", slack.message(CHANNEL, card_ts), action="card_edit")
        slack.triggers[payload["trigger_id"]] = "UARJUN"
        assert await bot.post(*signed_form(payload)) == 200
        view = slack.workspace.modals["UARJUN"]
        typed = {"edit_note": {"value": {"type": "plain_text_input", "value": "checked"}}}
        body, headers = signed_form(view_submission("UARJUN", view, values=typed))
        await asyncio.to_thread(cluster.pause)
        try:
            async with bot.http.post(
                bot.server.make_url("/slack/events"), data=body, headers=headers
            ) as answered:
                assert answered.status == 503
                assert answered.headers["Retry-After"] == "5"
        finally:
            await asyncio.to_thread(cluster.resume)
        await wait_until(lambda: _healthy(bot), what="/healthz back to 200")
