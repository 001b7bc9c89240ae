"""The demo ledger's payment card in Slack: the owner's sentence, its money, and no command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.slack.conftest import CHANNEL, Bot, buttons, said, validate
from tools.db import Database
from tools.toolsets.mcp import Sources
from tools.toolsets.mcp.demo import demo_ledger

pytestmark = pytest.mark.slow

SENTENCE = "Pay ₹7,800.50 to SUP-001, reference INV-2026-001"
PAY = {"supplier_id": "SUP-001", "amount": 7800.5, "reference": "INV-2026-001"}


def _where(ledger_db: Path) -> tuple[str, ...]:
    """What of the server's command line a person must never read on a card."""
    return ("-m ledger", "--db", str(ledger_db), ledger_db.name, "python")


def _nowhere(text: str, ledger_db: Path) -> None:
    for part in _where(ledger_db):
        assert part not in text, (part, text)


async def test_a_payment_card_reads_the_owners_sentence_with_money_and_no_command_line(
    bot: Bot, db: Database, ledger_db: Path
) -> None:
    """Priya's payment of 7800.5 to SUP-001 reads "Pay ₹7,800.50 to SUP-001, reference
    INV-2026-001" on the card, with "amount: 7800.5 (₹7,800.50)" below it; its server is
    "ledger", never the command line that starts it, on the card, on Arjun's copy, on the
    decided card or on the channel's line, which reads "Approved and done (Priya Raman): …".
    The card used to show "Server: ledger (python -m ledger --db …)"."""
    await Sources(db).put(1, demo_ledger(ledger_db))

    thread = await bot.mention("UPRIYA", "use ledger__record_payment with " + json.dumps(PAY))

    [card] = bot.cards()
    validate(card.blocks)
    text = said(card.blocks)
    assert text.splitlines()[1] == SENTENCE, text
    assert "amount: 7800.5 (₹7,800.50)" in text, text
    assert "Server: ledger" in text, text
    _nowhere(json.dumps(card.blocks, ensure_ascii=False), ledger_db)
    for copy in bot.cards(bot.dm("UARJUN")):
        _nowhere(json.dumps(copy.blocks, ensure_ascii=False), ledger_db)

    assert await bot.press("UPRIYA", card) == 200

    done = bot.shown(card)
    validate(done.blocks)
    assert buttons(done.blocks) == []
    shown = said(done.blocks)
    assert "Approved and done" in shown and SENTENCE in shown, shown
    assert "Recorded PAY-" in shown, shown
    _nowhere(json.dumps(done.blocks, ensure_ascii=False), ledger_db)
    [line] = [m for m in bot.slack.thread(CHANNEL, thread) if m.reply_broadcast]
    assert line.text.endswith(f"Approved and done (Priya Raman): {SENTENCE}"), line.text
    _nowhere(line.text + json.dumps(line.blocks, ensure_ascii=False), ledger_db)


async def test_a_done_card_never_says_what_it_would_do(
    bot: Bot, db: Database, ledger_db: Path
) -> None:
    """Once done, the ledger's preview ("Would record …. Nothing was recorded.") is gone from
    the card, which shows the result ("Recorded PAY-…"); it used to stand under "Approved and
    done" as if the payment had not happened."""
    await Sources(db).put(1, demo_ledger(ledger_db))
    pay = {**PAY, "supplier_id": "SUP-002", "reference": "NEFT-N0533"}
    await bot.mention("UPRIYA", "use ledger__record_payment with " + json.dumps(pay))
    [card] = bot.cards()
    assert "Would record" in said(card.blocks)  # the preview, while it waits

    assert await bot.press("UPRIYA", card) == 200

    shown = said(bot.shown(card).blocks)
    assert "Recorded PAY-" in shown, shown
    assert "would" not in shown.lower(), shown
    assert "nothing was recorded" not in shown.lower(), shown
