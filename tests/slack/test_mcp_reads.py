"""What a person reads back from a merchant's MCP read, over the real bolt endpoint."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.mcp.conftest import connect
from tests.slack.conftest import CHANNEL, Bot
from tools.db import Database

pytestmark = pytest.mark.slow


async def _answer(bot: Bot, text: str, user: str = "UARJUN") -> str:
    """``user`` mentions the bot with ``text``; returns the bot's one reply."""
    thread = await bot.mention(user, text)
    replies = [m.text for m in bot.slack.thread(CHANNEL, thread) if m.user == "UBOT"]
    assert len(replies) == 1, replies
    return replies[0]


async def test_the_ledgers_suppliers_are_answered_in_its_own_words(
    bot: Bot, db: Database, ledger_stdio: list[str]
) -> None:
    """ "use ledger__list_suppliers" answers every supplier with its id and what is owed in
    rupees, as the ledger itself says it: the next step ("pay SUP-001") needs the ids."""
    await connect(db, 1, "ledger", ledger_stdio, trust_annotations=True)

    answer = await _answer(bot, "use ledger__list_suppliers")

    assert "SUP-001 Nandi Dairy (Bengaluru): owed ₹" in answer
    for supplier in ("SUP-002 Kaveri Packaging", "SUP-003 Malnad Spices", "SUP-004 Coastal"):
        assert supplier in answer
    assert "inr" not in answer


async def test_twelve_structured_rows_are_answered_with_all_twelve_ids_and_money(
    bot: Bot, db: Database, hostile_stdio: list[str]
) -> None:
    """A server that answers rows alone (its text only their JSON) gets one line a row, each
    with its id, whole, and its rupee field (said so by the tool's schema) as money."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)

    answer = await _answer(bot, "use odd__list_suppliers with count=12")

    assert re.findall(r"SUP-\d{3}", answer) == [f"SUP-{n:03d}" for n in range(1, 13)]
    assert "Supplier number 12 of the long-named trading company" in answer
    assert "₹12,000.50" in answer
    assert '"supplier_id"' not in answer


async def test_an_amount_rule_makes_a_reads_field_money(
    bot: Bot, db: Database, hostile_stdio: list[str]
) -> None:
    """The owner's --amount on a read names a field of its rows as money, in minor units."""
    rules = {"list_suppliers": {"amount": "overdue", "unit": "minor"}}
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True, rules=rules)

    answer = await _answer(bot, "use odd__list_suppliers with count=2")

    assert "Overdue ₹500.00" in answer
    assert "Owed inr ₹2,000.50" in answer


async def test_a_read_longer_than_an_answer_says_how_many_rows_were_left_out(
    bot: Bot, db: Database, hostile_stdio: list[str]
) -> None:
    """Thirty rows are answered with whole rows only, then how many were left out and how to
    ask for them; no row is cut part way."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)

    answer = await _answer(bot, "use odd__list_suppliers with count=30")

    shown = re.findall(r"SUP-\d{3}", answer)
    assert shown == [f"SUP-{n:03d}" for n in range(1, len(shown) + 1)]
    assert f"{30 - len(shown)} more rows were left out" in answer
    assert "ask for fewer" in answer
    for line in answer.splitlines():
        if line.startswith("• "):
            assert re.search(r"Owed inr ₹[\d,]+\.50, Overdue \d+$", line), line


async def test_a_long_text_answer_is_cut_at_a_line_and_says_so(
    bot: Bot, db: Database, hostile_stdio: list[str]
) -> None:
    """A server's words too long for one answer are cut after a whole line, with how many
    lines were left out; its first lines are there as the server wrote them."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)

    answer = await _answer(bot, "use odd__huge_result with rows=60")

    lines = [line for line in answer.splitlines() if line.startswith("row ")]
    assert lines[0] == "row 000000 | " + "x" * 187
    assert all(line.endswith("x" * 187) for line in lines)
    assert 10 < len(lines) < 60
    assert f"{60 - len(lines)} more lines were left out" in answer


async def test_a_file_read_through_the_filesystem_server_is_its_lines_whole(
    bot: Bot, db: Database, filesystem_stdio: list[str], filesystem_root: Path
) -> None:
    """A file of a hundred lines read through npm's filesystem server is answered with its
    first lines as written, then how many were left out: never one bullet cut at 160."""
    note = filesystem_root / "suppliers.txt"
    note.write_text(
        "\n".join(f"SUP-{n:03d} owes ₹{n},000 on the March invoice" for n in range(1, 101))
    )
    await connect(db, 1, "files", filesystem_stdio, trust_annotations=True)

    answer = await _answer(bot, f"use files__read_text_file with path={note}")

    lines = [line for line in answer.splitlines() if line.startswith("SUP-")]
    assert lines[:2] == [
        "SUP-001 owes ₹1,000 on the March invoice",
        "SUP-002 owes ₹2,000 on the March invoice",
    ]
    assert all(line.endswith(" on the March invoice") for line in lines)
    assert f"{100 - len(lines)} more lines were left out" in answer
