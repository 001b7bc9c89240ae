"""`countersign mcp add --sentence` and `mcp set`, run for real against the demo ledger server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.bot.test_cli import assert_one_line_failure, cli
from tests.bot.test_cli_mcp import FIESTA, _lines, _put, _rows
from tools.db import Database, McpSourceRow
from tools.toolsets.mcp import SourceConfig, ToolRule

pytestmark = pytest.mark.slow

PAY = "record_payment=Pay {amount} to {supplier_id}, reference {reference}"


async def _reviewed(url: str) -> dict[str, Any] | None:
    db = Database(url)
    try:
        async with db.session() as session:
            row = await session.scalar(select(McpSourceRow).where(McpSourceRow.tenant_id == FIESTA))
            assert row is not None
            return row.reviewed
    finally:
        await db.dispose()


def test_a_sentence_naming_an_argument_the_tool_does_not_take_is_refused(
    tmp_path: Path, demo_url: str, ledger_stdio: list[str]
) -> None:
    """`mcp add … --sentence 'record_payment=Pay {amont} …'` exits 1 with one line naming
    {amont} and the arguments record_payment takes, and stores nothing."""
    bad = "record_payment=Pay {amont} to {supplier_id}"
    ran = cli(
        tmp_path, demo_url, "mcp", "add", "Fiesta Foods", "ledger", "--sentence", bad,
        "--", *ledger_stdio,
    )  # fmt: skip
    assert_one_line_failure(
        ran, "names {amont}, which record_payment does not take", "amount", "Nothing was stored"
    )
    assert asyncio.run(_rows(demo_url)) == {}


def test_a_placeholder_that_is_more_than_a_name_is_refused(
    tmp_path: Path, demo_url: str, ledger_stdio: list[str]
) -> None:
    """`{amount.__class__}` is not an argument's name: one line says so, nothing is stored."""
    bad = "record_payment=Pay {amount.__class__}"
    ran = cli(
        tmp_path, demo_url, "mcp", "add", "Fiesta Foods", "ledger", "--sentence", bad,
        "--", *ledger_stdio,
    )  # fmt: skip
    assert_one_line_failure(ran, "{amount.__class__} is not an argument's name")
    assert asyncio.run(_rows(demo_url)) == {}


def test_add_stores_a_sentence_list_shows_it_and_set_changes_it_keeping_the_review(
    tmp_path: Path, demo_url: str, ledger_stdio: list[str]
) -> None:
    """A sentence given at `mcp add` is stored and `mcp list` shows it; `mcp set` replaces it,
    keeps the tools the owner accepted, and refuses a bad placeholder changing nothing."""
    ran = cli(
        tmp_path, demo_url, "mcp", "add", "Fiesta Foods", "ledger", "--trust-annotations",
        "--sentence", PAY, "--", *ledger_stdio,
    )  # fmt: skip
    assert ran.code == 0, ran
    assert asyncio.run(_rows(demo_url))["ledger"]["rules"]["record_payment"] == {
        "sentence": "Pay {amount} to {supplier_id}, reference {reference}"
    }
    listed = cli(tmp_path, demo_url, "mcp", "list", "Fiesta Foods")
    assert (
        "rule record_payment: sentence “Pay {amount} to {supplier_id}, reference {reference}”"
        in _lines(listed)
    ), listed.out
    accepted = asyncio.run(_reviewed(demo_url))
    assert accepted is not None and "record_payment" in accepted

    changed = cli(
        tmp_path, demo_url, "mcp", "set", "Fiesta Foods", "ledger",
        "--sentence", "void_invoice=Void {invoice_id}: {reason}",
    )  # fmt: skip
    assert changed.code == 0, changed
    assert changed.out.startswith("The cards of void_invoice on the ledger server of Fiesta")
    rules = asyncio.run(_rows(demo_url))["ledger"]["rules"]
    assert rules["void_invoice"] == {"sentence": "Void {invoice_id}: {reason}"}
    assert rules["record_payment"]["sentence"].startswith("Pay {amount}")
    assert asyncio.run(_reviewed(demo_url)) == accepted

    refused = cli(
        tmp_path, demo_url, "mcp", "set", "Fiesta Foods", "ledger",
        "--sentence", "void_invoice=Void {invoice}",
    )  # fmt: skip
    assert_one_line_failure(refused, "names {invoice}, which void_invoice does not take")
    assert asyncio.run(_rows(demo_url))["ledger"]["rules"] == rules

    cleared = cli(
        tmp_path, demo_url, "mcp", "set", "Fiesta Foods", "ledger", "--sentence", "void_invoice="
    )
    assert cleared.code == 0, cleared
    assert "now read its title (no sentence)" in cleared.out
    assert "sentence" not in asyncio.run(_rows(demo_url))["ledger"]["rules"].get("void_invoice", {})


def test_tools_says_when_a_stored_sentence_names_an_argument_the_tool_does_not_take(
    tmp_path: Path, demo_url: str, ledger_stdio: list[str]
) -> None:
    """A sentence stored while the server could not be listed, naming {amont}, is named on the
    tool's line of `mcp tools` with what it takes: its cards read the title instead."""
    rule = ToolRule(sentence="Pay {amont}")
    config = SourceConfig(
        name="ledger",
        command=ledger_stdio[0],
        args=tuple(ledger_stdio[1:]),
        rules={"record_payment": rule},
    )
    asyncio.run(_put(demo_url, config))
    ran = cli(tmp_path, demo_url, "mcp", "tools", "Fiesta Foods")
    assert ran.code == 0, ran
    line = next(line for line in _lines(ran) if line.startswith("ledger__record_payment "))
    assert "sentence not used: the sentence for record_payment names {amont}" in line, line
    assert "it takes amount, note, reference, supplier_id" in line, line
