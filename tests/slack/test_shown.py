"""Every decision is shown: a card decided but never updated in Slack is redrawn, once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from bot.cards import card as cards
from bot.presses import sweeps
from bot.runtime import receipts
from bot.sandbox.payloads import TEAM
from bot.sandbox.webapi import Message
from bot.server import application
from bot.services import Services
from tests.slack.conftest import (
    CHANNEL,
    PEOPLE,
    Bot,
    SlackWebApi,
    bot_settings,
    buttons,
    card_id,
    request_status,
)
from tests.support.clock import SteppedClock
from tools import CardStatus, ProcessLease, Registry
from tools.db import Database
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry

# What Slack answers when it fails on its side; a later try may well succeed.
_SLACK_FAILED = {"ok": False, "error": "internal_error"}


class FlakySlack(SlackWebApi):
    """The fake Slack, failing the next ``refuse_updates`` chat.update calls on its side."""

    refuse_updates = 0

    async def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.refuse_updates > 0:
            self.refuse_updates -= 1
            return _SLACK_FAILED
        return await super()._chat_update(params)


@pytest.fixture
async def slack() -> AsyncIterator[FlakySlack]:
    fake = FlakySlack(team_id=TEAM)
    for user, (name, email) in PEOPLE.items():
        fake.add_user(user, name, email)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


def _audit_lines(bot: Bot) -> list[str]:
    return [m.text for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]


def _token(card: Message) -> str:
    block = next(b for b in card.blocks if b.get("type") == "actions")
    return str(next(e["value"] for e in block["elements"] if e["action_id"] == "card_approve"))


async def _decided_by_a_process_that_died(bot: Bot, card: Message, *, stop: bool = True) -> str:
    """Approves the card as another server would, whose process is gone before Slack is told:
    the write and the card's move to done commit, and nothing reaches Slack."""
    other_lease = ProcessLease(bot.services.db, clock=bot.clock)
    other = build_registry(bot.services.db, bot.signer, clock=bot.clock, lease=other_lease)
    await other_lease.start()
    arjun = await bot.services.directory.resolve("slack", TEAM, "UARJUN")
    assert arjun is not None
    decision = await other.approve(DEFAULT_AGENT, _token(card), arjun)
    assert decision.card.status is CardStatus.DONE
    if stop:
        await other_lease.stop()
    return decision.card.card_id


async def test_a_press_on_a_decided_card_slack_was_not_told_of_redraws_it(
    bot: Bot, slack: FlakySlack
) -> None:
    """Slack failing chat.update as Arjun's approval of request 1 is shown used to leave the
    card live for good, with no audit line: a second press only said "already approved",
    privately. Now that press redraws the card and posts the audit line, once."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    cid = card_id(card)
    slack.refuse_updates = 1
    await bot.press("UARJUN", card)
    assert await request_status(bot, 1) == "approved"
    assert buttons(bot.shown(card).blocks) != []

    await bot.press("UARJUN", bot.shown(card))

    assert buttons(bot.shown(card).blocks) == []
    [line] = _audit_lines(bot)
    assert line.startswith(":white_check_mark: Approved and done (Arjun Mehta): Approve request 1")
    assert bot.ephemerals("UARJUN")[-1].startswith(":no_entry: This card was already approved")
    record = await bot.registry.card(cid)
    assert record is not None and record.shown_at is not None
    updates = len(slack.called("chat.update"))
    await sweeps.redraw(bot.services, bot.mounted, now=bot.clock() + timedelta(hours=1))
    assert len(slack.called("chat.update")) == updates and len(_audit_lines(bot)) == 1


async def test_the_sweep_redraws_a_decision_slack_failed_to_show(
    bot: Bot, slack: FlakySlack
) -> None:
    """With nobody pressing again, this process's next sweep shows the decision Slack failed:
    the card loses its buttons and the channel gets its one audit line."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    slack.refuse_updates = 1
    await bot.press("UARJUN", card)
    assert buttons(bot.shown(card).blocks) != []

    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 1

    assert buttons(bot.shown(card).blocks) == []
    assert len(_audit_lines(bot)) == 1
    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 0
    assert len(_audit_lines(bot)) == 1


async def test_start_up_redraws_what_a_stopped_process_decided_and_never_showed(
    bot: Bot, db: Database, database_url: str, slack: FlakySlack, clock: SteppedClock
) -> None:
    """Arjun's approval commits in a process that then dies before Slack hears of it; the next
    server to start redraws the card without buttons and posts the audit line, once."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    cid = await _decided_by_a_process_that_died(bot, card)
    assert buttons(bot.shown(card).blocks) != [] and _audit_lines(bot) == []

    settings = bot_settings(slack, database_url)
    lease = ProcessLease(db, clock=clock)
    registry = build_registry(db, bot.signer, clock=clock, lease=lease)
    services = Services(registry, bot.assistant, bot.services.directory, db=db, lease=lease)
    server = TestServer(application(settings, services), host="127.0.0.1")
    await server.start_server()
    try:
        await services.tasks.idle()
    finally:
        await server.close()

    assert buttons(bot.shown(card).blocks) == []
    [line] = _audit_lines(bot)
    assert line.startswith(":white_check_mark: Approved and done (Arjun Mehta): Approve request 1")
    record = await bot.registry.card(cid)
    assert record is not None and record.shown_at is not None


async def test_a_live_process_keeps_its_decision_until_its_lease_runs_out(bot: Bot) -> None:
    """The sweep leaves a decision to the live process that made it; once that process has
    been silent past the grace period, the sweep redraws it."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    await _decided_by_a_process_that_died(bot, card, stop=False)

    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 0
    assert buttons(bot.shown(card).blocks) != []

    later = bot.clock() + bot.services.lease.expiry + timedelta(seconds=1)
    assert await sweeps.redraw(bot.services, bot.mounted, now=later) == 1
    assert buttons(bot.shown(card).blocks) == [] and len(_audit_lines(bot)) == 1


async def test_two_processes_sweeping_at_once_post_the_audit_line_once(bot: Bot) -> None:
    """Two servers' sweeps finding the same unshown decision at the same moment: one
    conditional UPDATE gives it to one of them, and the channel hears of it once."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    await _decided_by_a_process_that_died(bot, card)
    second_lease = ProcessLease(bot.services.db, clock=bot.clock)
    second: Registry = build_registry(
        bot.services.db, bot.signer, clock=bot.clock, lease=second_lease
    )
    await second_lease.start()
    beside = Services(
        second, bot.assistant, bot.services.directory, db=bot.services.db, lease=second_lease
    )
    try:
        redrawn = await asyncio.gather(
            sweeps.redraw(bot.services, bot.mounted, now=bot.clock()),
            sweeps.redraw(beside, bot.mounted, now=bot.clock()),
        )
    finally:
        await second_lease.stop()

    assert sorted(redrawn) == [0, 1]
    assert buttons(bot.shown(card).blocks) == []
    assert len(_audit_lines(bot)) == 1


async def test_the_sweep_redraws_a_card_of_several_a_stopped_process_decided(bot: Bot) -> None:
    """Arjun's approval of requests 1 and 2 in one card commits in a process that dies before
    Slack hears of it: the sweep used to pass over the items of a card of several, and 13 such
    cards kept live buttons through a soak. Now it redraws the card and posts its line, once."""
    await bot.mention("UARJUN", "approve requests 1 and 2")
    [card] = bot.cards()
    other_lease = ProcessLease(bot.services.db, clock=bot.clock)
    other = build_registry(bot.services.db, bot.signer, clock=bot.clock, lease=other_lease)
    await other_lease.start()
    arjun = await bot.services.directory.resolve("slack", TEAM, "UARJUN")
    assert arjun is not None
    await other.batches.approve(DEFAULT_AGENT, _token(card), arjun)
    await other_lease.stop()
    assert buttons(bot.shown(card).blocks) != []

    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 1

    assert buttons(bot.shown(card).blocks) == []
    assert len(_audit_lines(bot)) == 1
    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 0
    assert len(_audit_lines(bot)) == 1
    assert [await request_status(bot, r) for r in (1, 2)] == ["approved", "approved"]


async def test_a_card_of_several_whose_line_a_killed_process_claimed_gets_its_line(
    bot: Bot,
) -> None:
    """The process that approved requests 1 and 2 claimed the card's audit line and was killed
    before posting it: the sweep used to redraw the copies and leave the thread without a line
    for good. It posts the line, once, when nobody said it went out."""
    await bot.mention("UARJUN", "approve requests 1 and 2")
    [card] = bot.cards()
    other_lease = ProcessLease(bot.services.db, clock=bot.clock)
    other = build_registry(bot.services.db, bot.signer, clock=bot.clock, lease=other_lease)
    await other_lease.start()
    arjun = await bot.services.directory.resolve("slack", TEAM, "UARJUN")
    assert arjun is not None
    decided = await other.batches.approve(DEFAULT_AGENT, _token(card), arjun)
    whole = await cards.load(bot.registry, decided.batch.batch_id)
    assert whole is not None
    assert await receipts.claim(bot.services.db, whole.once("settled"), bot.clock())
    await other_lease.stop()

    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 1

    assert buttons(bot.shown(card).blocks) == []
    assert len(_audit_lines(bot)) == 1
    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 0
    assert len(_audit_lines(bot)) == 1


async def test_the_sweep_records_no_decision_shown_on_no_copy(bot: Bot) -> None:
    """Decided before its turn recorded where it was posted, and swept before that too: the
    sweep drew nothing and recorded the card shown, so the copy recorded next kept live
    buttons and no audit line for good (a soak's one finding). It records nothing until there
    is a copy, then draws it."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    cid = card_id(card)
    record = await bot.registry.card(cid)
    assert record is not None and record.posting
    await bot.card_store.update(cid, surface=None)  # not recorded yet
    await _decided_by_a_process_that_died(bot, card)

    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 0
    unshown = await bot.registry.card(cid)
    assert unshown is not None and unshown.shown_at is None

    await bot.card_store.attach_posting(cid, record.posting)  # the turn records it now
    later = bot.clock() + bot.services.lease.expiry
    assert await sweeps.redraw(bot.services, bot.mounted, now=later) == 1
    assert buttons(bot.shown(card).blocks) == []
    assert len(_audit_lines(bot)) == 1


async def test_a_card_its_server_never_recorded_is_shown_on_the_message_pressed(
    bot: Bot,
) -> None:
    """The server posting the card was killed before recording where: Arjun's press decided
    it, and the message nobody knew of kept live buttons and no audit line for good (a soak's
    presses whose card never changed). The press records the message it was made on, and the
    decision is shown there, once."""
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    cid = card_id(card)
    await bot.card_store.update(cid, surface=None)  # killed before recording it

    await bot.press("UARJUN", card)

    assert await request_status(bot, 1) == "approved"
    assert buttons(bot.shown(card).blocks) == []
    [line] = _audit_lines(bot)
    assert line.startswith(":white_check_mark: Approved and done (Arjun Mehta): Approve request 1")
    record = await bot.registry.card(cid)
    assert record is not None and record.shown_at is not None
    assert await sweeps.redraw(bot.services, bot.mounted, now=bot.clock()) == 0
