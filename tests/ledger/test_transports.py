"""The ledger as a real process, over stdio and over streamable HTTP, as `make run` connects it."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from ledger import IDEMPOTENCY_KEY
from tests.support.mcp_servers import payments_with_key

# Each file on one xdist worker, so its module-scoped servers start once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("mcp-ledger-transports")]

PAYMENT = {"supplier_id": "SUP-002", "amount": 1250.75, "reference": "NEFT-K3001"}


def stdio(command: list[str]) -> Client:
    return Client(StdioServerParameters(command=command[0], args=command[1:]))


def text(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def test_over_http_the_tools_their_annotations_a_read_and_an_error(ledger_http: str) -> None:
    """At /mcp on loopback: six tools with their hints, a read that answers, a refusal as isError."""
    async with Client(ledger_http) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        balance = await client.call_tool("supplier_balance", {"supplier_id": "SUP-003"})
        refused = await client.call_tool("supplier_balance", {"supplier_id": "SUP-404"})
    assert len(tools) == 6
    assert {
        name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint
    } == {
        "list_suppliers",
        "supplier_balance",
        "list_invoices",
        "preview_payment",
    }
    assert balance.structured_content is not None
    assert balance.structured_content["balance_inr"] == 23220.0
    assert refused.is_error and "no supplier 'SUP-404'" in text(refused)


async def test_over_http_a_payment_sent_twice_with_one_key_is_recorded_once(
    ledger_http: str, ledger_db: Path
) -> None:
    """Two deliveries of one approved card, on two connections, record one payment."""
    meta = {IDEMPOTENCY_KEY: "card-http-1"}
    async with Client(ledger_http) as client:
        first = await client.call_tool("record_payment", PAYMENT, meta=meta)  # type: ignore[arg-type]
    async with Client(ledger_http) as client:
        again = await client.call_tool("record_payment", PAYMENT, meta=meta)  # type: ignore[arg-type]
    assert not first.is_error and not again.is_error
    assert again.structured_content == first.structured_content
    assert "Nothing new was recorded" in text(again)
    assert payments_with_key(ledger_db, "card-http-1") == 1


async def test_over_stdio_two_processes_record_one_key_once(
    ledger_stdio: list[str], ledger_db: Path
) -> None:
    """Each stdio client starts its own server on the same file; the key still records once."""
    meta = {IDEMPOTENCY_KEY: "card-stdio-1"}
    async with stdio(ledger_stdio) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        first = await client.call_tool("record_payment", PAYMENT, meta=meta)  # type: ignore[arg-type]
    async with stdio(ledger_stdio) as client:
        again = await client.call_tool("record_payment", PAYMENT, meta=meta)  # type: ignore[arg-type]
        refused = await client.call_tool("record_payment", {**PAYMENT, "amount": -1})
    payment = tools["record_payment"].annotations
    assert payment is not None and payment.read_only_hint is False
    assert payment.destructive_hint is False and payment.idempotent_hint is True
    assert not first.is_error and again.structured_content == first.structured_content
    assert refused.is_error and "more than ₹0" in text(refused)
    assert payments_with_key(ledger_db, "card-stdio-1") == 1
