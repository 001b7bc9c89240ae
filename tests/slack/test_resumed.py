"""A turn killed while its cards went out is finished by another process: each card recorded, every copy sent, once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from bot.placement import placements_of
from bot.runtime.inbox import answer_left
from bot.sandbox import Message
from bot.slack import texts
from bot.slack.adapter import SlackAdapter
from bot.turns import posting
from tests.slack.conftest import CHANNEL, Bot, buttons, card_id, request_status
from tools import ProcessLease
from tools.db import INBOX, Database

MANAGERS = ("UARJUN", "UMEERA")


def _killed(work: Callable[..., Any], *, after: int = 0) -> Callable[..., Any]:
    """``work``, whose process dies as it is called (after ``after`` calls that went through)."""
    calls = 0

    async def dies(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls > after:
            raise asyncio.CancelledError  # the process is gone: nothing after this runs
        return await work(*args, **kwargs)

    return dies


async def _left_by_a_dead_process(db: Database) -> None:
    """The mention's row as the killed process left it: held by a lease that has stopped."""
    gone = ProcessLease(db)
    await gone.start()
    await gone.stop()
    async with db.begin() as conn:
        await conn.execute(update(INBOX).values(holder=gone.holder))


async def _unanswered(db: Database) -> int:
    async with db.begin() as conn:
        return len((await conn.execute(select(INBOX).where(INBOX.c.answered_at.is_(None)))).all())


def _said(bot: Bot, thread: str) -> list[str]:
    return [
        m.text
        for m in bot.slack.messages
        if m.channel == CHANNEL and m.thread_ts == thread and not buttons(m.blocks)
    ]


async def _resumed(bot: Bot, db: Database) -> None:
    await _left_by_a_dead_process(db)
    assert await answer_left(bot.services.inbox, bot.mounted) == 1
    await bot.settle()
    assert await answer_left(bot.services.inbox, bot.mounted) == 0
    assert await _unanswered(db) == 0


async def _copies(bot: Bot, card: Message) -> dict[str, list[Message]]:
    return {user: bot.cards(bot.dm(user)) for user in MANAGERS}


async def test_a_turn_killed_before_the_managers_copies_went_is_finished_with_them(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ravi's card was in the thread when its server died, before Arjun's and Meera's copies
    went: the message counted as answered, so they never got one (soak: 'UARJUN's copy of …'
    unseen). The process answering it again sends each of them one, and tells nobody it was
    lost."""
    monkeypatch.setattr(posting, "send_copies", _killed(posting.send_copies))
    thread = await bot.mention("URAVI", "approve request 1")
    monkeypatch.undo()
    [card] = bot.cards()
    assert all(found == [] for found in (await _copies(bot, card)).values())

    await _resumed(bot, db)

    copies = await _copies(bot, card)
    assert all(len(found) == 1 for found in copies.values()), copies
    assert texts.message_lost() not in _said(bot, thread)
    record = await bot.registry.card(card_id(card))
    assert len(placements_of(record)) == 3
    assert await bot.press("UMEERA", copies["UMEERA"][0]) == 200
    for shown in (card, *(found[0] for found in copies.values())):
        assert buttons(bot.shown(shown).blocks) == [], shown.channel


async def test_a_copy_sent_and_not_recorded_is_recorded_not_sent_again(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after Meera's copy was posted and before it was recorded: finishing the turn
    records the copy her DM holds rather than sending a second one whose buttons nobody
    would ever update."""
    send = SlackAdapter.send_copy
    sent: list[Any] = []

    async def posted_then_killed(self: SlackAdapter, *args: Any, **kwargs: Any) -> Any:
        placement = await send(self, *args, **kwargs)
        sent.append(placement)
        if len(sent) == 2:
            raise asyncio.CancelledError  # posted; the process died before recording it
        return placement

    monkeypatch.setattr(SlackAdapter, "send_copy", posted_then_killed)
    await bot.mention("URAVI", "approve request 1")
    monkeypatch.undo()
    [card] = bot.cards()

    await _resumed(bot, db)

    copies = await _copies(bot, card)
    assert all(len(found) == 1 for found in copies.values()), copies
    record = await bot.registry.card(card_id(card))
    recorded = {(p.channel, p.ts) for p in placements_of(record) if hasattr(p, "ts")}
    assert {(found[0].channel, found[0].ts) for found in copies.values()} <= recorded
    assert await bot.press("UARJUN", copies["UARJUN"][0]) == 200
    for shown in (card, *(found[0] for found in copies.values())):
        assert buttons(bot.shown(shown).blocks) == [], shown.channel


async def test_a_card_posted_and_never_recorded_is_recorded_not_posted_again(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed between posting Ravi's card and recording where: the card is recorded as the
    message its thread holds (one card, not two), and the managers get their copies."""
    monkeypatch.setattr(posting.cards, "attach", _killed(posting.cards.attach))
    thread = await bot.mention("URAVI", "approve request 1")
    monkeypatch.undo()
    [card] = bot.cards()
    assert placements_of(await bot.registry.card(card_id(card))) == ()

    await _resumed(bot, db)

    assert bot.cards() == [card]
    [first, *others] = placements_of(await bot.registry.card(card_id(card)))
    assert (first.channel, getattr(first, "ts", None)) == (CHANNEL, card.ts)
    assert len(others) == 2
    assert texts.message_lost() not in _said(bot, thread)
    copies = await _copies(bot, card)
    assert await bot.press("UARJUN", copies["UARJUN"][0]) == 200
    assert buttons(bot.shown(card).blocks) == []


async def test_a_turn_killed_before_its_card_was_posted_has_it_posted_once(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after its words and before its card: Arjun read "waiting on the card below", and
    was then told to send it again (answered twice, and no card). The process answering it
    again posts the card itself, once, and his Approve on it runs the write."""
    monkeypatch.setattr(SlackAdapter, "post_card", _killed(SlackAdapter.post_card))
    thread = await bot.mention("UARJUN", "approve request 1")
    monkeypatch.undo()
    assert bot.cards() == []

    await _resumed(bot, db)

    [card] = bot.cards()
    assert card.thread_ts == thread
    assert texts.message_lost() not in _said(bot, thread)
    assert len(placements_of(await bot.registry.card(card_id(card)))) == 1
    assert await bot.press("UARJUN", card) == 200
    assert await request_status(bot, 1) == "approved"
    assert buttons(bot.shown(card).blocks) == []


async def test_a_routed_card_never_posted_is_posted_with_the_managers_copies(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ravi's card, routed to the managers, never reached the thread: it is posted there, Arjun
    and Meera each get one copy, and Meera's Approve from hers updates every copy."""
    monkeypatch.setattr(SlackAdapter, "post_card", _killed(SlackAdapter.post_card))
    thread = await bot.mention("URAVI", "approve request 1")
    monkeypatch.undo()

    await _resumed(bot, db)

    [card] = bot.cards()
    copies = await _copies(bot, card)
    assert all(len(found) == 1 for found in copies.values()), copies
    assert texts.message_lost() not in _said(bot, thread)
    assert await bot.press("UMEERA", copies["UMEERA"][0]) == 200
    assert await request_status(bot, 1) == "approved"
    for shown in (card, *(found[0] for found in copies.values())):
        assert buttons(bot.shown(shown).blocks) == [], shown.channel


async def test_a_card_of_several_never_posted_is_posted_whole(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "approve requests 1 and 2" killed before its one card went: that card, one Approve for
    both, is posted, and pressing it approves both."""
    monkeypatch.setattr(SlackAdapter, "post_card", _killed(SlackAdapter.post_card))
    await bot.mention("UARJUN", "approve requests 1 and 2")
    monkeypatch.undo()

    await _resumed(bot, db)

    [card] = bot.cards()
    assert await bot.press("UARJUN", card) == 200
    assert [await request_status(bot, n) for n in (1, 2)] == ["approved", "approved"]
    assert buttons(bot.shown(card).blocks) == []


async def test_a_card_past_its_time_is_not_posted_and_the_person_is_told(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its card expired before anyone answered the message again: nobody could press it, so
    none is posted, and Arjun is told it was lost and to send it again, once."""
    monkeypatch.setattr(SlackAdapter, "post_card", _killed(SlackAdapter.post_card))
    thread = await bot.mention("UARJUN", "approve request 1")
    monkeypatch.undo()
    bot.clock.step(timedelta(minutes=31))

    await _resumed(bot, db)

    assert bot.cards() == []
    assert _said(bot, thread).count(texts.message_lost()) == 1


async def test_a_turn_whose_cards_cannot_be_kept_tells_the_person(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database went down as the model answered, before the turn could keep its cards:
    the answer's indicator had settled, so the turn ended in silence (soak: 3 mentions never
    answered). Arjun is told to send it again."""

    async def down(*_: Any) -> None:
        raise ConnectionRefusedError("the database is restarting")

    monkeypatch.setattr(bot.services.inbox, "proposed", down)
    thread = await bot.mention("UARJUN", "approve request 1")

    assert bot.cards() == []
    assert _said(bot, thread) == [texts.message_database_unreachable()]


def _down_once(work: Callable[..., Any]) -> Callable[..., Any]:
    """``work``, refused once by a database restarting, then through."""
    calls = 0

    async def refused(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionRefusedError("the database is restarting")
        return await work(*args, **kwargs)

    return refused


async def test_a_card_posted_as_the_database_went_down_is_recorded_by_the_next_sweep(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ravi's card reached the thread and the database went down before it was recorded: the
    message was marked answered and nobody finished it, so the card kept live buttons after
    its decision and the managers never got their copies. Once the database is back, this
    process's next sweep records it and sends each manager one copy."""
    monkeypatch.setattr(posting.cards, "attach", _down_once(posting.cards.attach))
    thread = await bot.mention("URAVI", "approve request 1")
    [card] = bot.cards()
    assert placements_of(await bot.registry.card(card_id(card))) == ()

    assert await answer_left(bot.services.inbox, bot.mounted) == 1
    await bot.settle()

    assert await _unanswered(db) == 0
    assert bot.cards() == [card]
    assert len(placements_of(await bot.registry.card(card_id(card)))) == 3
    assert texts.message_lost() not in _said(bot, thread)
    copies = await _copies(bot, card)
    assert await bot.press("UMEERA", copies["UMEERA"][0]) == 200
    for shown in (card, *(found[0] for found in copies.values())):
        assert buttons(bot.shown(shown).blocks) == [], shown.channel
    assert await answer_left(bot.services.inbox, bot.mounted) == 0


async def test_a_card_not_posted_as_the_database_went_down_is_posted_by_the_next_sweep(
    bot: Bot, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "approve requests 1 and 2": the words went out and the database went down before their
    card could be made, and Arjun waited on "the card below" in silence. The next sweep posts
    his cards (each its own, as they were never grouped), and approving them runs both."""
    monkeypatch.setattr(bot.registry.batches, "bundle", _down_once(bot.registry.batches.bundle))
    await bot.mention("UARJUN", "approve requests 1 and 2")
    monkeypatch.undo()
    assert bot.cards() == []

    assert await answer_left(bot.services.inbox, bot.mounted) == 1
    await bot.settle()

    assert await _unanswered(db) == 0
    cards = bot.cards()
    assert len(cards) == 2  # each on its own: they were never grouped
    for card in cards:
        assert await bot.press("UARJUN", card) == 200
    assert [await request_status(bot, n) for n in (1, 2)] == ["approved", "approved"]


async def test_a_tool_that_finds_the_database_down_tells_the_person_to_send_it_again(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database went down as the model looked request 1 up: Arjun read "something went
    wrong on my side", which never said what or that sending it again would do. He is told
    the database is unreachable and to send it again, and the next ask gets its card."""

    async def down(*_: Any, **__: Any) -> None:
        raise ConnectionRefusedError("the database is restarting")

    monkeypatch.setattr(bot.registry, "call", down)
    thread = await bot.mention("UARJUN", "approve request 1")
    monkeypatch.undo()

    assert bot.cards() == []
    assert _said(bot, thread) == [texts.message_database_unreachable()]
    await bot.mention("UARJUN", "approve request 1")
    assert len(bot.cards()) == 1
