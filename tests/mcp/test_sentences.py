"""What the model and the card read of an MCP write: the owner's sentence, its money, marked values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.conftest import ARJUN
from tests.mcp.conftest import connect
from tools import Registry
from tools.db import Database
from tools.toolsets.mcp import Sources
from tools.toolsets.mcp.demo import demo_ledger

pytestmark = pytest.mark.slow


async def test_the_model_reads_the_sentence_with_its_money_and_that_it_is_not_done(
    registry: Registry, db: Database, ledger_db: Path
) -> None:
    """The demo ledger's payment tells the model "Pay ₹7,800.50 to SUP-001, reference
    INV-2026-001" beside "This has NOT been done", with the amount's money beside its value;
    no line names the command that starts the server."""
    await Sources(db).put(1, demo_ledger(ledger_db))
    args = {"supplier_id": "SUP-001", "amount": 7800.5, "reference": "INV-2026-001"}

    result = await registry.call(registry.default_agent, "ledger__record_payment", args, ARJUN)

    seen = result.for_model()
    [row] = seen["rows"]
    assert row["summary"] == "Pay ₹7,800.50 to SUP-001, reference INV-2026-001"
    assert seen["note"].startswith("This has NOT been done.")
    details = {d["label"]: d["value"] for d in row["details"]}
    assert details["amount"] == "7800.5 (₹7,800.50)"
    assert details["Server"] == "ledger"
    assert str(ledger_db) not in repr(seen)


async def test_hidden_characters_in_a_value_are_marked_in_the_sentence(
    registry: Registry, db: Database, ledger_stdio: list[str]
) -> None:
    """A reference holding a zero-width space and a right-to-left override reads
    "INV-⟦U+200B⟧001⟦U+202E⟧" in the sentence, as on every other line of the card; the
    arguments stay as given."""
    sentence = "Pay {amount} to {supplier_id}, reference {reference}"
    rule = {"amount": "amount", "sentence": sentence}
    await connect(
        db, 1, "ledger", ledger_stdio, trust_annotations=True, rules={"record_payment": rule}
    )
    args = {"supplier_id": "SUP-001", "amount": 10, "reference": "INV-\u200b001\u202e"}

    result = await registry.call(registry.default_agent, "ledger__record_payment", args, ARJUN)

    assert result.proposal is not None
    assert result.proposal.summary == "Pay ₹10.00 to SUP-001, reference INV-⟦U+200B⟧001⟦U+202E⟧"


async def test_without_a_sentence_the_title_is_followed_by_the_targets_values(
    registry: Registry, db: Database, ledger_stdio: list[str]
) -> None:
    """With no sentence, the card reads the tool's title on the server and the value of each
    --target argument ("Void an invoice on the ledger server: invoice_id INV-1008."), where it
    read the title alone, the same for every invoice."""
    rule = {"targets": ["invoice_id"]}
    await connect(
        db, 1, "ledger", ledger_stdio, trust_annotations=True, rules={"void_invoice": rule}
    )
    args = {"invoice_id": "INV-1008", "reason": "entered twice"}

    result = await registry.call(registry.default_agent, "ledger__void_invoice", args, ARJUN)

    assert result.proposal is not None
    assert result.proposal.summary == "Void an invoice on the ledger server: invoice_id INV-1008."


async def test_a_sentence_naming_an_argument_the_tool_lacks_reads_the_title(
    registry: Registry, db: Database, ledger_stdio: list[str]
) -> None:
    """A stored sentence naming {amont} (checked only once the server listed) never reaches a
    card: the card reads the tool's title, rather than a sentence with a hole in it."""
    rule = {"sentence": "Pay {amont} to {supplier_id}"}
    await connect(
        db, 1, "ledger", ledger_stdio, trust_annotations=True, rules={"record_payment": rule}
    )
    args = {"supplier_id": "SUP-003", "amount": 5, "reference": "R-9"}

    result = await registry.call(registry.default_agent, "ledger__record_payment", args, ARJUN)

    assert result.proposal is not None
    assert result.proposal.summary == "Record a payment on the ledger server."
