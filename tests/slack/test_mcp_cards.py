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
from bot.sandbox.payloads import block_action, event, form, message
from bot.server import RUNTIME, settle
from tests.mcp.conftest import connect
from tests.slack.conftest import CARD_SECRET, CHANNEL, Bot, buttons, card_id, said, validate
from tests.support.mcp_servers import REPO, HostileState
from tools import CardRecord, CardStatus
from tools.db import Database
from tools.mcp import IDEMPOTENCY_KEY
from tools.reconcile import UNKNOWN_NOTE

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
    rows = {row.tool: row.id for row in await bot.registry.cards.rows()}
    assert not _keyed(hostile_state, "transfer", rows["odd__transfer"])

    assert await bot.press("UPRIYA", card) == 200

    assert len(_keyed(hostile_state, "transfer", rows["odd__transfer"])) == 1
    assert len(_keyed(hostile_state, "set_flag", rows["odd__set_flag"])) == 1
    assert buttons(bot.shown(card).blocks) == []


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

    await bot.post(form(_press_payload("UPRIYA", slow)), "application/x-www-form-urlencoded")
    await _until(
        "the call to reach the server",
        30,
        lambda: bool(_keyed(hostile_state, "slow_transfer", slow_id)),
    )
    await bot.post(form(_press_payload("UARJUN", arjuns)), "application/x-www-form-urlencoded")
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
