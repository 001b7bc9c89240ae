"""The ledger's tools through the official MCP client, in process: what they say and what they change."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from ledger import IDEMPOTENCY_KEY, Ledger, build_server
from tests.support.mcp_servers import held, payments_with_key

READS = {"list_suppliers", "supplier_balance", "list_invoices", "preview_payment"}
WRITES = {"record_payment", "void_invoice"}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
async def client(db: Path) -> AsyncIterator[Client]:
    async with held(Client(build_server(Ledger(db)))) as connected:
        yield connected


def text(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def call(
    client: Client, tool: str, key: str | None = None, **arguments: Any
) -> CallToolResult:
    meta = {IDEMPOTENCY_KEY: key} if key is not None else None
    return await client.call_tool(tool, arguments, meta=meta)  # type: ignore[arg-type]


def payments(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM payments").fetchone()[0])


async def test_every_tool_has_a_title_a_description_a_schema_and_truthful_annotations(
    client: Client,
) -> None:
    """Reads say readOnlyHint; a payment is a non-destructive idempotent write; a void is destructive."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == READS | WRITES
    for tool in tools.values():
        assert tool.title and tool.description and tool.input_schema["type"] == "object"
        assert tool.output_schema is not None
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        assert tool.annotations.read_only_hint is (tool.name in READS)
    payment = tools["record_payment"].annotations
    assert payment is not None
    assert (payment.destructive_hint, payment.idempotent_hint) == (False, True)
    void = tools["void_invoice"].annotations
    assert void is not None and void.destructive_hint is True


async def test_the_amount_is_declared_in_rupees_as_a_positive_decimal(client: Client) -> None:
    """The schema tells a caller the unit, so 7800.50 is not sent as 780050 paise."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in ("record_payment", "preview_payment"):
        amount = tools[name].input_schema["properties"]["amount"]
        assert amount["type"] == "number" and amount["exclusiveMinimum"] == 0
        assert "rupees" in amount["description"] and "7800.50" in amount["description"]
    required = tools["record_payment"].input_schema["required"]
    assert sorted(required) == ["amount", "reference", "supplier_id"]


async def test_the_seeded_books_list_suppliers_with_what_is_owed(client: Client) -> None:
    """A new file is seeded: Nandi Dairy is owed ₹32,140.50 (₹50,640.50 invoiced, ₹18,500 paid)."""
    listed = await call(client, "list_suppliers")
    assert not listed.is_error
    assert listed.structured_content is not None
    names = {row["supplier_id"]: row["name"] for row in listed.structured_content["suppliers"]}
    assert names["SUP-001"] == "Nandi Dairy" and names["SUP-002"] == "Kaveri Packaging"
    balance = await call(client, "supplier_balance", supplier_id="SUP-001")
    assert balance.structured_content == {
        "supplier_id": "SUP-001",
        "name": "Nandi Dairy",
        "invoiced_inr": 50640.5,
        "paid_inr": 18500.0,
        "balance_inr": 32140.5,
        "open_invoices": ["INV-1004", "INV-1008"],
    }
    assert "owed ₹32,140.50" in text(balance)


async def test_invoices_filter_by_supplier_and_status(client: Client) -> None:
    """list_invoices narrows to one supplier and one state; the partly paid INV-1002 stays open."""
    found = await call(client, "list_invoices", supplier_id="SUP-002", status="open")
    assert found.structured_content is not None
    ids = [row["invoice_id"] for row in found.structured_content["invoices"]]
    assert ids == ["INV-1002", "INV-1006"]
    paid = await call(client, "list_invoices", status="paid")
    assert paid.structured_content is not None
    assert [row["invoice_id"] for row in paid.structured_content["invoices"]] == [
        "INV-1001",
        "INV-1005",
    ]


async def test_a_preview_shows_the_payment_and_records_nothing(client: Client, db: Path) -> None:
    """preview_payment says balance before → after and which invoices it settles, and writes no row."""
    before = payments(db)
    preview = await call(client, "preview_payment", supplier_id="SUP-001", amount=25000.5)
    assert not preview.is_error
    assert preview.structured_content is not None
    assert preview.structured_content["payment_id"] is None
    assert preview.structured_content["balance_before_inr"] == 32140.5
    assert preview.structured_content["balance_after_inr"] == 7140.0
    assert preview.structured_content["invoices_settled"] == ["INV-1004"]
    assert "₹32,140.50 → ₹7,140.00" in text(preview) and "Nothing was recorded" in text(preview)
    assert payments(db) == before


async def test_a_payment_sent_twice_with_one_key_is_recorded_once(client: Client, db: Path) -> None:
    """The second call with the same key records nothing and answers with the first call's result."""
    args = {"supplier_id": "SUP-001", "amount": 7800.5, "reference": "NEFT-N0533"}
    first = await call(client, "record_payment", key="card-41", **args)
    again = await call(client, "record_payment", key="card-41", **args)
    assert not first.is_error and not again.is_error
    assert again.structured_content == first.structured_content
    assert first.structured_content is not None
    assert first.structured_content["balance_after_inr"] == 24340.0
    assert text(first).startswith("Recorded PAY-0004: ₹7,800.50 to SUP-001 Nandi Dairy")
    assert "Nothing new was recorded" in text(again) and "card-41" in text(again)
    assert payments_with_key(db, "card-41") == 1
    balance = await call(client, "supplier_balance", supplier_id="SUP-001")
    assert balance.structured_content is not None
    assert balance.structured_content["balance_inr"] == 24340.0


async def test_a_payment_without_a_key_still_works_each_time(client: Client, db: Path) -> None:
    """No key, no dedupe: two calls are two payments."""
    before = payments(db)
    for _ in range(2):
        done = await call(
            client, "record_payment", supplier_id="SUP-003", amount=100, reference="UPI-1"
        )
        assert not done.is_error
    assert payments(db) == before + 2


async def test_a_key_reused_for_another_payment_is_refused(client: Client, db: Path) -> None:
    """A key is one request: sent again with another amount, nothing is recorded and it says why."""
    await call(
        client, "record_payment", key="card-7", supplier_id="SUP-002", amount=500, reference="R1"
    )
    other = await call(
        client, "record_payment", key="card-7", supplier_id="SUP-002", amount=900, reference="R1"
    )
    assert other.is_error
    assert "card-7" in text(other) and "Nothing was done" in text(other)
    assert payments_with_key(db, "card-7") == 1


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"supplier_id": "SUP-009", "amount": 10}, "no supplier 'SUP-009'"),
        ({"supplier_id": "SUP-001", "amount": 0}, "more than ₹0"),
        ({"supplier_id": "SUP-001", "amount": -250}, "more than ₹0"),
        ({"supplier_id": "SUP-001", "amount": 10.005}, "more than two decimals"),
    ],
)
async def test_a_payment_the_ledger_refuses_is_a_tool_error(
    client: Client, db: Path, arguments: dict[str, Any], words: str
) -> None:
    """An unknown supplier or an amount that is not positive rupees comes back isError, recording nothing."""
    before = payments(db)
    refused = await call(client, "record_payment", key="card-x", reference="R", **arguments)
    assert refused.is_error
    assert words in text(refused)
    assert payments(db) == before
    preview = await call(client, "preview_payment", **arguments)
    assert preview.is_error and words in text(preview)


async def test_an_unknown_supplier_names_the_ones_there_are(client: Client) -> None:
    """The refusal lists the suppliers, so the caller can pick a real one."""
    refused = await call(client, "supplier_balance", supplier_id="Nandi")
    assert refused.is_error
    assert "SUP-001 Nandi Dairy" in text(refused) and "SUP-004 Coastal Cold Chain" in text(refused)


async def test_voiding_an_open_invoice_lowers_the_balance_once_per_key(client: Client) -> None:
    """void_invoice removes an open invoice from what is owed; the same key again changes nothing."""
    first = await call(
        client, "void_invoice", key="card-9", invoice_id="INV-1008", reason="Duplicate bill"
    )
    again = await call(
        client, "void_invoice", key="card-9", invoice_id="INV-1008", reason="Duplicate bill"
    )
    assert not first.is_error and not again.is_error
    assert first.structured_content is not None
    assert first.structured_content["balance_after_inr"] == 22340.5
    assert again.structured_content == first.structured_content
    assert "Nothing new was recorded" in text(again)
    without_key = await call(client, "void_invoice", invoice_id="INV-1008", reason="Duplicate bill")
    assert without_key.is_error and "already void" in text(without_key)


async def test_a_paid_invoice_cannot_be_voided(client: Client) -> None:
    """INV-1001 is paid: voiding it is refused and the balance is unchanged."""
    refused = await call(client, "void_invoice", invoice_id="INV-1001", reason="Wrong")
    assert refused.is_error and "is paid" in text(refused)
    balance = await call(client, "supplier_balance", supplier_id="SUP-001")
    assert balance.structured_content is not None
    assert balance.structured_content["balance_inr"] == 32140.5


async def test_a_payment_settles_invoices_oldest_first(client: Client) -> None:
    """Paying Kaveri Packaging's remaining ₹26,000 on INV-1002 marks it paid and leaves INV-1006 open."""
    done = await call(
        client, "record_payment", supplier_id="SUP-002", amount=26000, reference="NEFT-K2"
    )
    assert done.structured_content is not None
    assert done.structured_content["invoices_settled"] == ["INV-1002"]
    still_open = await call(client, "list_invoices", supplier_id="SUP-002", status="open")
    assert still_open.structured_content is not None
    assert [row["invoice_id"] for row in still_open.structured_content["invoices"]] == ["INV-1006"]


async def test_reopening_the_file_keeps_the_books_and_does_not_seed_again(db: Path) -> None:
    """A second start on the same file reads what the first recorded."""
    async with Client(build_server(Ledger(db))) as first:
        await call(
            first, "record_payment", key="card-1", supplier_id="SUP-004", amount=450, reference="R"
        )
    async with Client(build_server(Ledger(db))) as second:
        balance = await call(second, "supplier_balance", supplier_id="SUP-004")
    assert balance.structured_content is not None
    assert balance.structured_content["balance_inr"] == 4000.0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM suppliers").fetchone()[0] == 4
