"""A message acknowledged by a process that dies before answering it is answered by another, once."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from sqlalchemy import event, select, update

from bot.runtime.inbox import answer_left
from bot.sandbox import Message
from bot.sandbox.workspace import BOT_USER
from bot.server import application
from bot.services import Services
from bot.slack import texts
from tests.slack.conftest import CHANNEL, DM, Bot, bot_settings, message
from tools import ProcessLease
from tools.db import INBOX, LEASES, Database
from tools.toolsets.merchant import build_registry


def _replies(bot: Bot, thread: str) -> list[str]:
    """What the bot said in a thread, cards aside."""
    return [
        m.text
        for m in bot.slack.messages
        if m.channel == CHANNEL
        and m.thread_ts == thread
        and not any(b.get("type") == "actions" for b in m.blocks)
    ]


async def _acked_then_killed(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch, text: str, *, started: bool = False
) -> str:
    """Mentions the bot; the server acks, and its process dies before the turn answers.

    The turn never runs (as when the process is killed after the 200), and the message's row
    is left as that process left it: held by a lease that has stopped; ``started``: its turn
    had claimed it."""
    never_run: list[Coroutine[Any, Any, None]] = []

    def dropped(work: Coroutine[Any, Any, None], **_: Any) -> None:
        never_run.append(work)
        work.close()

    monkeypatch.setattr(bot.services, "typing_after", 600.0)
    monkeypatch.setattr(bot.services.tasks, "turn", dropped)
    ts = bot.ts()
    status = await bot.send(
        message("UARJUN", f"<@UBOT> {text}", channel=CHANNEL, ts=ts, kind="app_mention")
    )
    assert status == 200 and len(never_run) == 1
    monkeypatch.undo()
    gone = ProcessLease(db)
    await gone.start()
    await gone.stop()
    changed = {"holder": gone.holder}
    if started:
        changed["started_at"] = bot.clock()
    async with db.begin() as conn:
        await conn.execute(update(INBOX).values(**changed))
    return ts


async def _unanswered(db: Database) -> int:
    async with db.begin() as conn:
        rows = (await conn.execute(select(INBOX).where(INBOX.c.answered_at.is_(None)))).all()
    return len(rows)


async def test_a_message_is_kept_before_its_ack_and_marked_answered(bot: Bot, db: Database) -> None:
    """A mention's row is in the inbox once Slack has its 200, and answered once its reply is out."""
    thread = await bot.mention("UARJUN", "show branches")
    async with db.begin() as conn:
        [row] = (await conn.execute(select(INBOX))).all()
    assert row.holder == bot.services.lease.holder
    assert row.started_at is not None and row.answered_at is not None
    assert len(_replies(bot, thread)) == 1


async def test_a_message_a_killed_process_acked_is_answered_once(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after its ack, before the turn began: the soak lost 84 such messages, as Slack
    never sends an acknowledged event again. The next sweep answers it, card and all, once."""
    thread = await _acked_then_killed(bot, db, monkeypatch, "approve request 1")
    assert _replies(bot, thread) == []

    assert await answer_left(bot.services.inbox, bot.mounted) == 1
    await bot.settle()

    assert len(_replies(bot, thread)) == 1
    assert [c.thread_ts for c in bot.cards()] == [thread]
    assert await answer_left(bot.services.inbox, bot.mounted) == 0
    await bot.settle()
    assert len(_replies(bot, thread)) == 1 and await _unanswered(db) == 0


async def test_a_message_whose_turn_had_started_is_told_lost_once(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its turn had claimed it when the process died: what it did is unknown, so the person is
    told it was lost and to send it again, once, and the model is not run a second time."""
    thread = await _acked_then_killed(bot, db, monkeypatch, "approve request 1", started=True)

    assert await answer_left(bot.services.inbox, bot.mounted) == 1
    assert await answer_left(bot.services.inbox, bot.mounted) == 0
    await bot.settle()

    assert _replies(bot, thread) == [texts.message_lost()]
    assert bot.cards() == [] and await _unanswered(db) == 0


async def test_a_live_process_keeps_its_unanswered_messages(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message another live process took in is left to it, however long its model takes."""
    await _acked_then_killed(bot, db, monkeypatch, "approve request 1")
    alive = ProcessLease(db)
    await alive.start()
    async with db.begin() as conn:
        await conn.execute(update(INBOX).values(holder=alive.holder))

    assert await answer_left(bot.services.inbox, bot.mounted) == 0
    assert await _unanswered(db) == 1


async def test_messages_kept_at_once_share_a_transaction(bot: Bot, db: Database) -> None:
    """Forty messages acknowledged at the same moment are kept in two INSERTs, not forty: the
    ack's write must not cost a burst one commit per event."""
    inserts: list[str] = []
    engine = bot.services.db.engine.sync_engine

    def executed(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("INSERT INTO inbox"):
            inserts.append(statement)

    event.listen(engine, "before_cursor_execute", executed)
    try:
        await asyncio.gather(
            *(
                bot.services.inbox.keep(f"k{i}", platform="slack", installation="T", message={})
                for i in range(40)
            )
        )
    finally:
        event.remove(engine, "before_cursor_execute", executed)
    assert 1 <= len(inserts) <= 2
    async with db.begin() as conn:
        assert len((await conn.execute(select(INBOX))).all()) == 40


async def test_a_silent_process_still_running_here_keeps_its_messages(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the database restarts no process can beat: one silent past the grace period yet
    running on this machine is still answering, and taking its message had it answered twice
    (19 in a soak). Only a process that is gone gives its messages up."""
    await _acked_then_killed(bot, db, monkeypatch, "approve request 1")
    silent = ProcessLease(db)
    await silent.start()
    long_ago = bot.clock() - timedelta(hours=1)
    async with db.begin() as conn:
        await conn.execute(update(INBOX).values(holder=silent.holder))
        await conn.execute(
            update(LEASES).where(LEASES.c.holder == silent.holder).values(beat_at=long_ago)
        )

    assert await answer_left(bot.services.inbox, bot.mounted) == 0
    assert await _unanswered(db) == 1


async def test_a_server_starting_answers_what_a_killed_one_acked(
    bot: Bot, db: Database, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next server to start sweeps the inbox before anything else asks it to: the message
    a killed server acknowledged is answered without waiting for a later sweep."""
    thread = await _acked_then_killed(bot, db, monkeypatch, "show branches")
    settings = bot_settings(bot.slack, database_url)
    lease = ProcessLease(db, clock=bot.clock)
    registry = build_registry(db, bot.signer, clock=bot.clock, lease=lease)
    services = Services(registry, bot.assistant, bot.services.directory, db=db, lease=lease)
    server = TestServer(application(settings, services), host="127.0.0.1")
    await server.start_server()
    try:
        await services.tasks.idle()
    finally:
        await server.close()

    assert len(_replies(bot, thread)) == 1 and await _unanswered(db) == 0


async def test_a_message_answered_before_its_mark_is_not_told_lost(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after its answer went out and before it was marked answered: telling the person
    it was lost answered it twice (3 in a soak). The thread already holds the app's answer,
    so it is only marked answered."""
    thread = await _acked_then_killed(bot, db, monkeypatch, "show branches", started=True)
    bot.slack.workspace.post(
        Message(CHANNEL, bot.ts(), "Here are the branches", thread_ts=thread, user=BOT_USER)
    )

    assert await answer_left(bot.services.inbox, bot.mounted) == 1
    await bot.settle()

    assert _replies(bot, thread) == ["Here are the branches"]
    assert await _unanswered(db) == 0


async def test_a_mention_in_the_bots_thread_leaves_no_row_taken_again_and_again(
    bot: Bot, db: Database
) -> None:
    """A mention in a thread the bot is in arrives as message.channels (answered, unkept) and
    as app_mention (kept, a duplicate): its row stayed unanswered, and every process that
    started took it and ran the duplicate again. Swept, it is found answered, and said once."""
    thread = await bot.mention("UARJUN", "branches")
    # Stamped as the workspace stamps messages, so the app's answer comes after it, as in Slack.
    ts, text = bot.slack.workspace.next_ts(), "<@UBOT> pending requests"
    await bot.send(message("UARJUN", text, channel=CHANNEL, ts=ts, thread_ts=thread))
    await bot.send(
        message("UARJUN", text, channel=CHANNEL, ts=ts, thread_ts=thread, kind="app_mention")
    )
    await bot.settle()
    said = _replies(bot, thread)
    assert len(said) == 2
    gone = ProcessLease(db)
    await gone.start()
    await gone.stop()
    async with db.begin() as conn:
        await conn.execute(
            update(INBOX).where(INBOX.c.answered_at.is_(None)).values(holder=gone.holder)
        )

    await answer_left(bot.services.inbox, bot.mounted)
    await bot.settle()
    assert _replies(bot, thread) == said  # nothing said again, and not told it was lost
    assert await _unanswered(db) == 0
    assert await answer_left(bot.services.inbox, bot.mounted) == 0


async def test_a_message_in_an_assistant_thread_is_kept(bot: Bot, db: Database) -> None:
    """Bolt's assistant middleware takes every DM message in a thread, so these never reached
    the listener that keeps DMs: a server killed after their ack lost them for good."""
    thread = bot.ts()
    body = message(
        "UARJUN", "branches", channel=DM, ts=bot.ts(), thread_ts=thread, channel_type="im"
    )
    assert await bot.send(body) == 200
    await bot.settle()
    async with db.begin() as conn:
        [row] = (await conn.execute(select(INBOX))).all()
    assert row.message["where"]["thread_ts"] == thread
    assert row.answered_at is not None


async def test_an_answer_to_the_persons_next_message_is_not_this_ones(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut off mid-turn, then the person wrote again and was answered: any app message after
    the lost one once counted as its answer, and its person was never told it was lost."""
    thread = await _acked_then_killed(bot, db, monkeypatch, "show branches", started=True)
    bot.slack.workspace.post(Message(CHANNEL, bot.ts(), "hello?", thread_ts=thread, user="UARJUN"))
    bot.slack.workspace.post(
        Message(CHANNEL, bot.ts(), "Hello, Arjun.", thread_ts=thread, user=BOT_USER)
    )

    assert await answer_left(bot.services.inbox, bot.mounted) == 1
    await bot.settle()

    assert _replies(bot, thread)[-1] == texts.message_lost()
    assert await _unanswered(db) == 0
