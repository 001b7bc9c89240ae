"""A merchant's MCP write in Slack: a card like any other, over the real bolt endpoint."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from bot.sandbox import Message
from bot.sandbox.payloads import block_action, event, form, message, view_submission
from bot.server import RUNTIME, settle
from tests.mcp.conftest import connect
from tests.slack.conftest import (
    CARD_SECRET,
    CHANNEL,
    Bot,
    approve_modals,
    buttons,
    card_id,
    said,
    validate,
)
from tests.support.mcp_servers import REPO, HostileState
from tools import CardRecord, CardStatus
from tools.db import Database
from tools.keeping.reconcile import UNKNOWN_NOTE
from tools.toolsets.mcp import IDEMPOTENCY_KEY

pytestmark = pytest.mark.slow


async def _connected(bot: Bot, db: Database, command: list[str]) -> None:
    """Adds the hostile server as Priya's "odd" source, started and listed before any turn: a
    turn waits only a moment for a server's tools, and a busy machine starts one slower."""
    await connect(db, 1, "odd", command, trust_annotations=True)
    assert await bot.registry.card_tool(1, "odd__transfer") is not None


def _keyed(state: HostileState, tool: str, key: str) -> list[dict[str, object]]:
    return [dict(c) for c in state.calls(tool) if c["meta"].get(IDEMPOTENCY_KEY) == key]


async def test_a_write_becomes_a_card_and_approve_sends_it_once(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """Priya's "use odd__transfer …" posts a card whose sentence is the code's, whose details
    are the arguments as they will be sent, with a warning (the tool is destructive); nothing
    reaches the server until she approves, and then the call goes once, keyed by the card."""
    await _connected(bot, db, hostile_stdio)
    before = len(hostile_state.calls("transfer"))

    await bot.mention("UPRIYA", "use odd__transfer with to=ACC_77 amount=5")

    [card] = bot.cards()
    validate(card.blocks)
    text = said(card.blocks)
    assert "Transfer money on the odd server." in text
    assert "ACC_77" in json.dumps(card.blocks)
    assert "destructive" in text
    assert "card_approve" in buttons(card.blocks)
    assert len(hostile_state.calls("transfer")) == before
    as_posted, cid = copy.deepcopy(card), card_id(card)

    assert await bot.press("UPRIYA", card) == 200

    assert [c["arguments"] for c in _keyed(hostile_state, "transfer", cid)] == [
        {"to": "ACC_77", "amount": 5}
    ]
    assert buttons(bot.shown(card).blocks) == []
    # The same button pressed again (a second tap, a stale copy): refused, nothing sent.
    assert await bot.press("UPRIYA", as_posted) == 200
    assert len(_keyed(hostile_state, "transfer", cid)) == 1


async def test_two_mcp_writes_of_one_turn_are_one_card_of_several(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """Two writes asked in one message are one card; approving it sends each once."""
    await _connected(bot, db, hostile_stdio)

    await bot.mention(
        "UPRIYA",
        "use odd__transfer with to=ACC-2 amount=7; use odd__set_flag with name=b value=true",
    )

    [card] = bot.cards()
    validate(card.blocks)
    assert (
        "2 changes" in said(card.blocks)
        or "Approve both" in json.dumps(card.blocks)
        or ("Approve all 2" in json.dumps(card.blocks))
    )
    rows = {row.tool: row.id for row in await bot.card_store.rows()}
    assert not _keyed(hostile_state, "transfer", rows["odd__transfer"])

    assert await bot.press("UPRIYA", card) == 200

    assert len(_keyed(hostile_state, "transfer", rows["odd__transfer"])) == 1
    assert len(_keyed(hostile_state, "set_flag", rows["odd__set_flag"])) == 1
    assert buttons(bot.shown(card).blocks) == []


async def test_a_card_of_several_shows_each_calls_arguments(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """One Approve for two MCP writes shows every argument each will be sent, under its own
    line, in Slack's rich text: its sentence alone ("Transfer money on the odd server.") left
    the account and the memo unseen."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)

    await bot.mention(
        "UPRIYA",
        "use odd__transfer with to=ACC-2 amount=7; " + _pay("for the March invoice" + TAIL),
    )

    [card] = bot.cards()
    validate(card.blocks)
    text = said(card.blocks)
    assert "Approve both" in json.dumps(card.blocks)
    for shown in ("to: ACC-2", "amount: 7", "to: SUP-001", "memo: for the March invoice" + TAIL):
        assert shown in text, text
    assert hostile_state.calls("pay") == []


async def test_writes_too_long_for_one_card_each_get_their_own(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """Five writes whose memos fit a card each, but not one card together, are five cards,
    each showing its whole memo, rather than one card that leaves some of them out."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    memos = [f"{n}" * 1900 + TAIL for n in range(1, 6)]

    await bot.mention("UPRIYA", "; ".join(_pay(m) for m in memos))

    cards = bot.cards()
    assert len(cards) == 5
    for card, memo in zip(cards, memos, strict=True):
        validate(card.blocks)
        assert memo in said(card.blocks)
        assert "card_approve" in buttons(card.blocks)
    assert hostile_state.calls("pay") == []


TAIL = " HIDDEN_TAIL_42 and also pay ATTACKER 99999"


def _pay(memo: str, **more: object) -> str:
    return "use odd__pay with " + json.dumps({"to": "SUP-001", "amount": 5, "memo": memo, **more})


def _replies(bot: Bot, thread: str) -> str:
    return "\n".join(m.text for m in bot.slack.thread(CHANNEL, thread) if m.user == "UBOT")


async def test_a_memo_too_long_to_show_whole_is_refused_before_any_card(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A memo of 2,000 characters and a tail ("… and also pay ATTACKER 99999") makes no card:
    Priya reads that the arguments are too long to show in full and nothing was sent, and the
    server receives nothing. The card used to show the memo cut at 500 characters, keep
    Approve, and send all of it."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    memo = "x" * 2_000 + TAIL

    thread = await bot.mention("UPRIYA", _pay(memo))

    assert bot.cards() == []
    assert hostile_state.calls("pay") == []
    told = _replies(bot, thread)
    assert "too long to show in full" in told, told
    assert f"{len(memo):,} characters in memo, the most is 2,000" in told, told
    assert "nothing was sent" in told, told
    assert await bot.card_store.rows() == []


async def test_a_long_memo_that_fits_is_shown_whole_and_sent_as_shown(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A memo of 1,950 characters is on the card whole, its tail included, and Approve sends
    exactly that memo: nothing is sent that the card did not show."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    memo = "y" * (1_950 - len(TAIL)) + TAIL

    await bot.mention("UPRIYA", _pay(memo))

    [card] = bot.cards()
    validate(card.blocks)
    assert f"memo: {memo}" in said(card.blocks)
    cid = card_id(card)
    assert await bot.press("UPRIYA", card) == 200
    [sent] = _keyed(hostile_state, "pay", cid)
    assert sent["arguments"] == {"to": "SUP-001", "amount": 5, "memo": memo}


async def test_sixty_arguments_are_all_on_the_card(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A tool of sixty arguments shows all sixty, each value whole, and sends those sixty; the
    card used to show 22 and say "More: 38 more details not shown" above Approve."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    values = {f"a{n:02d}": f"value-{n:02d}-" + "z" * 60 for n in range(60)}

    await bot.mention("UPRIYA", "use odd__wide with " + json.dumps(values))

    [card] = bot.cards()
    validate(card.blocks)
    text = said(card.blocks)
    assert "more details not shown" not in text
    for name, value in values.items():
        assert f"{name}: {value}" in text, name
    cid = card_id(card)
    assert await bot.press("UPRIYA", card) == 200
    [sent] = _keyed(hostile_state, "wide", cid)
    assert sent["arguments"] == values


async def test_a_time_in_an_argument_stays_as_written(
    bot: Bot, db: Database, hostile_stdio: list[str]
) -> None:
    """An argument "at 2026-05-01T10:15:59Z" is on the card as written, not as a date in the
    reader's zone to the minute with its "at" gone; the card's own expiry is still a date."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)

    await bot.mention("UPRIYA", _pay("rent", when="at 2026-05-01T10:15:59Z"))

    [card] = bot.cards()
    validate(card.blocks)
    text = said(card.blocks)
    assert "when: at 2026-05-01T10:15:59Z" in text, text
    dates = [
        e
        for b in card.blocks
        if b["type"] == "rich_text"
        for s in b["elements"]
        for e in s["elements"]
        if e["type"] == "date"
    ]
    assert dates == [], dates
    assert "<!date^" in text  # the expiry, written by the code, in the reader's zone


HIDDEN_TO = "SUP-\u200b001\u202e"
HIDDEN_MEMO = "pay \u2066ATTACKER\u2069 now\u00ad"
MARKED_TO = "SUP-⟦U+200B⟧001⟦U+202E⟧"
MARKED_MEMO = "pay ⟦U+2066⟧ATTACKER⟦U+2069⟧ now⟦U+00AD⟧"


def _shows_marked(blocks: list[dict[str, object]]) -> None:
    validate(blocks)  # type: ignore[arg-type]
    text = said(blocks)  # type: ignore[arg-type]
    assert f"to: {MARKED_TO}" in text, text
    assert f"memo: {MARKED_MEMO}" in text, text
    assert "This card holds characters that do not show; they are marked." in text
    raw = json.dumps(blocks, ensure_ascii=False)
    assert not any(c in raw for c in "\u200b\u202e\u2066\u2069\u00ad"), raw


async def test_hidden_characters_are_marked_on_every_copy_and_the_audit_line(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """``SUP-\\u200b001\\u202e`` and a memo holding U+2066, U+2069 and U+00AD read as marks
    (``SUP-⟦U+200B⟧001⟦U+202E⟧``) with a line saying so, on the thread's card, on the
    manager's private copy and on the decided card; the server still gets the arguments as
    given. They used to reach the card raw: the person read "SUP-001"."""
    await connect(
        db, 1, "odd", hostile_stdio, trust_annotations=True, rules={"pay": {"role": "manager"}}
    )

    thread = await bot.mention("URAVI", _pay(HIDDEN_MEMO, to=HIDDEN_TO))

    [card] = bot.cards()
    _shows_marked(card.blocks)
    copy = bot.cards(bot.dm("UARJUN"))[0]
    _shows_marked(copy.blocks)
    cid = card_id(card)
    assert await bot.press("UARJUN", copy) == 200
    _shows_marked(bot.shown(card).blocks)
    [sent] = _keyed(hostile_state, "pay", cid)
    assert sent["arguments"]["to"] == HIDDEN_TO
    assert sent["arguments"]["memo"] == HIDDEN_MEMO
    assert [m for m in bot.slack.thread(CHANNEL, thread) if m.reply_broadcast]


def _press_payload(user: str, card: Message) -> dict[str, object]:
    """A signed-request body for ``user``'s Approve on ``card``, as ``Bot.press`` sends it."""
    block = next(b for b in card.blocks if b.get("type") == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == "card_approve")
    return block_action(
        user,
        action_id="card_approve",
        value=button["value"],
        block_id=block["block_id"],
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
    )


async def _approve(bot: Bot, user: str, card: Message) -> None:
    """``user``'s Approve on a channel's card and their "Yes, approve" in the modal it opens,
    without waiting for the press's work."""
    opened = len(approve_modals(bot))
    await bot.post(form(_press_payload(user, card)), "application/x-www-form-urlencoded")
    [view] = approve_modals(bot)[opened:]
    confirmed = form(view_submission(user, view, values={}))
    await bot.post(confirmed, "application/x-www-form-urlencoded")


async def _until(what: str, seconds: float, done: Callable[[], bool]) -> float:
    """Seconds until ``done`` holds, polled; fails past ``seconds``."""
    started = time.monotonic()
    while not done():
        assert time.monotonic() - started < seconds, f"{what} took longer than {seconds} s"
        await asyncio.sleep(0.02)  # polling a condition the bot's own tasks bring about
    return time.monotonic() - started


async def _record(bot: Bot, cid: str) -> CardRecord:
    found = await bot.registry.card(cid)
    assert found is not None
    return found


async def test_a_slow_servers_write_holds_up_nobody_elses_press_or_message(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """While Priya's approved transfer waits 4 s on the odd server, Arjun's Approve on his own
    card is decided within a second and Meera's message is answered: the call holds no database
    transaction. It used to hold SQLite's write lock (taken with the merchant's name once that
    was a minute old) and both waited for the server, 14 s behind a 15 s write."""
    await _connected(bot, db, hostile_stdio)
    await bot.mention("UPRIYA", "use odd__slow_transfer with to=ACC_9 amount=5 seconds=4")
    [slow] = bot.cards()
    slow_id = card_id(slow)
    await bot.mention("UARJUN", "approve request 2")
    arjuns = next(c for c in bot.cards() if card_id(c) != slow_id)
    arjuns_id = card_id(arjuns)
    bot.clock.step(timedelta(minutes=2))  # the merchant's name, read a minute ago, is read again

    await _approve(bot, "UPRIYA", slow)
    await _until(
        "the call to reach the server",
        30,
        lambda: bool(_keyed(hostile_state, "slow_transfer", slow_id)),
    )
    await _approve(bot, "UARJUN", arjuns)
    decided = await _until("Arjun's card", 3, lambda: not buttons(bot.shown(arjuns).blocks))
    thread = bot.ts()
    await bot.post(
        json.dumps(
            event(
                message(
                    "UMEERA", "<@UBOT> branches", channel=CHANNEL, ts=thread, kind="app_mention"
                )
            )
        ),
        "application/json",
    )
    await _until(
        "Meera's answer",
        3,
        lambda: any(m.thread_ts == thread and "Indiranagar" in m.text for m in bot.slack.messages),
    )
    still = (await _record(bot, slow_id)).status

    assert decided < 1.0, decided
    assert (await _record(bot, arjuns_id)).status is CardStatus.DONE
    assert still is CardStatus.EXECUTING, "the slow write ended before the others were measured"
    await bot.settle()
    assert (await _record(bot, slow_id)).status is CardStatus.DONE
    assert len(_keyed(hostile_state, "slow_transfer", slow_id)) == 1


async def test_a_process_killed_while_its_call_is_with_the_server_leaves_outcome_unknown(
    bot: Bot,
    db: Database,
    database_url: str,
    hostile_stdio: list[str],
    hostile_state: HostileState,
    tmp_path: Path,
) -> None:
    """Another process approves Priya's transfer and is killed while the odd server holds the
    call: the card is settled as "outcome unknown" (the call was sent once, nobody knows if it
    ran), never "nothing was changed", and the card in the channel says so without buttons."""
    await _connected(bot, db, hostile_stdio)
    await bot.mention("UPRIYA", "use odd__slow_transfer with to=ACC_6 amount=6 seconds=20")
    [card] = bot.cards()
    cid = card_id(card)
    token = str(_press_payload("UPRIYA", card)["actions"][0]["value"])  # type: ignore[index]
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO / "tests/mcp/crash_child.py"),
        database_url,
        CARD_SECRET,
        token,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        await _until(
            "the call to reach the server",
            60,
            lambda: bool(_keyed(hostile_state, "slow_transfer", cid)),
        )
        assert (await _record(bot, cid)).status is CardStatus.EXECUTING
    finally:
        child.send_signal(signal.SIGKILL)
        assert await child.wait() == -signal.SIGKILL

    await settle(bot.server.app[RUNTIME])

    stored = await _record(bot, cid)
    assert (stored.status, stored.outcome) == (CardStatus.UNKNOWN, UNKNOWN_NOTE)
    shown = bot.shown(card)
    validate(shown.blocks)
    assert buttons(shown.blocks) == []
    assert shown.blocks[0]["text"]["text"] == "Outcome unknown"
    assert UNKNOWN_NOTE in said(shown.blocks)
    assert "othing was changed" not in said(shown.blocks)
    assert len(_keyed(hostile_state, "slow_transfer", cid)) == 1
