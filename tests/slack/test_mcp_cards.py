"""A merchant's MCP write in Slack: a card like any other, over the real bolt endpoint."""

from __future__ import annotations

import copy
import json

import pytest

from tests.mcp.conftest import connect
from tests.slack.conftest import Bot, buttons, card_id, said, validate
from tests.support.mcp_servers import HostileState
from tools.db import Database
from tools.mcp import IDEMPOTENCY_KEY

pytestmark = pytest.mark.slow


def _keyed(state: HostileState, tool: str, key: str) -> list[dict[str, object]]:
    return [dict(c) for c in state.calls(tool) if c["meta"].get(IDEMPOTENCY_KEY) == key]


async def test_a_write_becomes_a_card_and_approve_sends_it_once(
    bot: Bot, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """Priya's "use odd__transfer …" posts a card whose sentence is the code's, whose details
    are the arguments as they will be sent, with a warning (the tool is destructive); nothing
    reaches the server until she approves, and then the call goes once, keyed by the card."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
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
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)

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
