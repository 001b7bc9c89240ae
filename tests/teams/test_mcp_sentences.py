"""The demo ledger's payment card in Teams: the owner's sentence, its money, and no command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.teams.adaptive import texts, validate
from tests.teams.conftest import PRIYA, TeamsBot
from tools.db import Database
from tools.toolsets.mcp import McpTools, SourceClients, Sources
from tools.toolsets.mcp.demo import demo_ledger

pytestmark = pytest.mark.slow

SENTENCE = "Pay ₹7,800.50 to SUP-001, reference INV-2026-001"
PAY = {"supplier_id": "SUP-001", "amount": 7800.5, "reference": "INV-2026-001"}


def _nowhere(text: str, ledger_db: Path) -> None:
    for part in ("-m ledger", "--db", str(ledger_db), ledger_db.name, "python"):
        assert part not in text, (part, text)


async def test_a_payment_card_reads_the_owners_sentence_and_a_done_one_its_result(
    teams: TeamsBot, db: Database, ledger_db: Path
) -> None:
    """In a Teams channel Priya's payment card reads "Pay ₹7,800.50 to SUP-001, reference
    INV-2026-001" with "amount: 7800.5 (₹7,800.50)"; approved, the card shows the ledger's
    result and never "would" or "nothing was recorded", and neither copy nor the channel's
    line shows the command line that starts the server."""
    teams.registry.add_source(McpTools(db, SourceClients(list_ttl=0)))
    await Sources(db).put(1, demo_ledger(ledger_db))

    posted = await teams.card_for(PRIYA, "use ledger__record_payment with " + json.dumps(PAY))

    [card] = posted.cards
    validate(card)
    shown = texts(card)
    assert SENTENCE in shown.splitlines(), shown
    assert "amount: 7800.5 (₹7,800.50)" in shown, shown
    _nowhere(json.dumps(card, ensure_ascii=False), ledger_db)

    status, body = await teams.press(PRIYA, "approve", posted)

    assert status == 200
    done = body["value"]
    validate(done)
    said = texts(done)
    assert "Approved and done" in said and SENTENCE in said, said
    assert "Recorded PAY-" in said, said
    assert "would" not in said.lower() and "nothing was recorded" not in said.lower(), said
    _nowhere(json.dumps(done, ensure_ascii=False), ledger_db)
    for update in teams.connector.updates():
        _nowhere(json.dumps(update.cards, ensure_ascii=False), ledger_db)
    [line] = [t for t in teams.connector.texts() if t.startswith("✅")]
    assert line.endswith(SENTENCE), line
    _nowhere(line, ledger_db)
