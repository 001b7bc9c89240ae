"""A press acknowledged by a process that dies before deciding it is decided by another, once."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import pytest
from sqlalchemy import select, update

from bot.runtime.inbox import answer_left
from bot.sandbox import Message
from tests.slack.conftest import CHANNEL, Bot, buttons, request_status
from tools import ProcessLease
from tools.db import INBOX, Database


async def _handed_over(bot: Bot, db: Database) -> int:
    """Every kept row as a killed process leaves it (its lease stopped); answered again."""
    gone = ProcessLease(db)
    await gone.start()
    await gone.stop()
    async with db.begin() as conn:
        await conn.execute(update(INBOX).values(holder=gone.holder, answered_at=None))
    taken = await answer_left(bot.services.inbox, bot.mounted)
    await bot.settle()
    return taken


async def _unanswered(db: Database) -> int:
    async with db.begin() as conn:
        return len((await conn.execute(select(INBOX).where(INBOX.c.answered_at.is_(None)))).all())


async def _approve(bot: Bot, card: Message) -> int:
    """Arjun presses Approve on his channel card and "Yes, approve" in its confirm, as Slack
    sends them: the submission, which is the press, with its trigger."""
    return await bot.press("UARJUN", card)


def _audit_lines(bot: Bot) -> list[str]:
    return [m.text for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]


async def test_a_press_its_server_died_before_deciding_is_decided_by_another(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arjun's Approve had its 200 and the server died before deciding it: Slack never sends
    a press again, so the card kept its buttons and he waited in vain (soak: 'the update of
    <card> in C0SOAK after UARJUN's press' unseen). Another process decides it, once."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    never_run: list[Coroutine[Any, Any, None]] = []

    def dropped(work: Coroutine[Any, Any, None], **_: Any) -> None:
        never_run.append(work)
        work.close()

    monkeypatch.setattr(bot.services.tasks, "press", dropped)
    assert await _approve(bot, card) == 200
    monkeypatch.undo()
    assert len(never_run) == 1 and buttons(bot.shown(card).blocks) != []

    assert await _handed_over(bot, db) == 2  # the mention (found answered) and the press

    assert await request_status(bot, 1) == "approved"
    assert buttons(bot.shown(card).blocks) == []
    assert len(_audit_lines(bot)) == 1
    assert await _unanswered(db) == 0


async def test_a_press_decided_again_runs_its_write_once(bot: Bot, db: Database) -> None:
    """A press whose server decided and showed it, then died before marking it answered, is
    decided again by another: the card is done once, with one audit line, and Arjun is told
    nothing new was done."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    assert await _approve(bot, card) == 200
    assert await request_status(bot, 1) == "approved"

    assert await _handed_over(bot, db) == 2

    assert await request_status(bot, 1) == "approved"
    assert len(_audit_lines(bot)) == 1
    assert buttons(bot.shown(card).blocks) == []
    assert await _unanswered(db) == 0
