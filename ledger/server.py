"""The ledger as an MCP server: four reads, a preview, and two writes that honour an idempotency key.

Each tool declares a title, an input schema, an output schema and annotations that say what it
does (a read is ``readOnlyHint``; a payment is not destructive and is idempotent by its key;
voiding an invoice is destructive). Descriptions are written for the model that reads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from ledger import books
from ledger.models import (
    Balance,
    InvoiceList,
    InvoiceStatus,
    PaymentOutcome,
    SupplierList,
    VoidOutcome,
    paise,
    say,
)
from ledger.store import Ledger, LedgerError, Replay

__all__ = ["IDEMPOTENCY_KEY", "build_server"]

# The request `_meta` key Countersign sends the card id under when a person approves a write.
IDEMPOTENCY_KEY = "dev.countersign/idempotency-key"

_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_PAYMENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_VOID = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

SupplierId = Annotated[
    str, Field(description="The supplier's id, e.g. SUP-001 (see list_suppliers).")
]
Rupees = Annotated[
    float,
    Field(
        description=(
            "The amount in Indian rupees (INR) as a decimal number with at most two decimals"
            " (paise), e.g. 7800.50 for ₹7,800.50. Not paise, not a string."
        ),
        json_schema_extra={"exclusiveMinimum": 0},
    ),
]

_INSTRUCTIONS = (
    "The supplier ledger of a small food business in Bengaluru, in Indian rupees: suppliers,"
    " their invoices, and payments made to them. Reads are free. record_payment and void_invoice"
    " change the books; preview_payment shows what a payment would do without doing it."
)


def build_server(ledger: Ledger) -> MCPServer[Any]:
    """The MCP server over one ledger file."""
    server: MCPServer[Any] = MCPServer(
        "countersign-ledger",
        title="Supplier ledger (demo)",
        version="1",
        instructions=_INSTRUCTIONS,
        # The SDK logs every refused call at INFO on stderr; a demo's terminal wants less.
        log_level="WARNING",
    )
    _add_reads(server, ledger)
    _add_writes(server, ledger)
    return server


def _add_reads(server: MCPServer[Any], ledger: Ledger) -> None:
    @server.tool(title="List suppliers", annotations=_READ)
    def list_suppliers() -> Annotated[CallToolResult, SupplierList]:
        """Lists every supplier with its id, city and what is owed to it now, in rupees."""
        with ledger.transaction(commit=False) as conn:
            found = books.suppliers(conn)
        lines = [
            f"{s.supplier_id} {s.name} ({s.city}): owed {say(s.balance_inr)}"
            for s in found.suppliers
        ]
        return _reply("\n".join(lines), found)

    @server.tool(title="Supplier balance", annotations=_READ)
    def supplier_balance(supplier_id: SupplierId) -> Annotated[CallToolResult, Balance]:
        """Shows what is owed to one supplier: invoiced, paid, the balance and the open invoices."""
        with _refusals(), ledger.transaction(commit=False) as conn:
            found = books.balance(conn, supplier_id)
        return _reply(
            f"{found.supplier_id} {found.name}: invoiced {say(found.invoiced_inr)}, paid"
            f" {say(found.paid_inr)}, owed {say(found.balance_inr)}. Open invoices:"
            f" {', '.join(found.open_invoices) or 'none'}.",
            found,
        )

    @server.tool(title="List invoices", annotations=_READ)
    def list_invoices(
        supplier_id: Annotated[
            str | None, Field(description="Only this supplier's invoices, e.g. SUP-002.")
        ] = None,
        status: Annotated[
            InvoiceStatus | None, Field(description="Only invoices in this state.")
        ] = None,
    ) -> Annotated[CallToolResult, InvoiceList]:
        """Lists invoices, oldest first, optionally of one supplier and in one state."""
        with _refusals(), ledger.transaction(commit=False) as conn:
            found = books.invoices(conn, supplier_id, status)
        lines = [
            f"{i.invoice_id} {i.supplier_id} {say(i.amount_inr)} issued {i.issued_on} due"
            f" {i.due_on}: {i.status}"
            for i in found.invoices
        ]
        return _reply("\n".join(lines) or "No invoices match.", found)

    @server.tool(title="Preview a payment", annotations=_READ)
    def preview_payment(
        supplier_id: SupplierId, amount: Rupees
    ) -> Annotated[CallToolResult, PaymentOutcome]:
        """Shows what paying a supplier this amount would do (balance before → after, invoices it
        would mark paid), without recording anything. The companion read of record_payment."""
        with _refusals(), ledger.transaction(commit=False) as conn:
            found = books.pay(conn, supplier_id, paise(amount), reference=None, note=None, key=None)
        return _reply(f"{found.summary} Nothing was recorded.", found)


def _add_writes(server: MCPServer[Any], ledger: Ledger) -> None:
    @server.tool(title="Record a payment", annotations=_PAYMENT)
    def record_payment(
        supplier_id: SupplierId,
        amount: Rupees,
        reference: Annotated[
            str,
            Field(description="The bank reference of the transfer, e.g. NEFT-N0533.", min_length=1),
        ],
        ctx: Context,
        note: Annotated[str | None, Field(description="A note kept with the payment.")] = None,
    ) -> Annotated[CallToolResult, PaymentOutcome]:
        """Records a payment made to a supplier; it lowers what is owed and marks invoices paid,
        oldest first. Preview it with preview_payment. Sent twice with the same idempotency key
        (request _meta "dev.countersign/idempotency-key") it records it once."""
        key = _key(ctx)
        arguments = {
            "supplier_id": supplier_id,
            "amount": amount,
            "reference": reference,
            "note": note,
        }
        with _refusals():
            minor = paise(amount)
            done = ledger.once(
                key,
                "record_payment",
                arguments,
                PaymentOutcome,
                lambda conn: books.pay(
                    conn, supplier_id, minor, reference=reference, note=note, key=key
                ),
            )
        return _reply(_said(done, key, done.result.summary), done.result)

    @server.tool(title="Void an invoice", annotations=_VOID)
    def void_invoice(
        invoice_id: Annotated[str, Field(description="The invoice's id, e.g. INV-1008.")],
        reason: Annotated[
            str, Field(description="Why it is void, kept on the invoice.", min_length=1)
        ],
        ctx: Context,
    ) -> Annotated[CallToolResult, VoidOutcome]:
        """Voids an open invoice: it no longer counts towards what is owed. It cannot be undone,
        and a paid invoice cannot be voided."""
        key = _key(ctx)
        with _refusals():
            done = ledger.once(
                key,
                "void_invoice",
                {"invoice_id": invoice_id, "reason": reason},
                VoidOutcome,
                lambda conn: books.void(conn, invoice_id, reason),
            )
        return _reply(_said(done, key, done.result.summary), done.result)


def _said(done: Replay[Any], key: str | None, summary: str) -> str:
    if not done.replayed:
        return summary
    return (
        f"Already done: idempotency key {key!r} was first sent at {done.recorded_at}, and that"
        f" call's result stands. Nothing new was recorded this time. {summary}"
    )


def _key(ctx: Context) -> str | None:
    meta = cast("Mapping[str, object]", ctx.request_context.meta or {})
    value = meta.get(IDEMPOTENCY_KEY)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ToolError(
            f"The _meta key {IDEMPOTENCY_KEY} must be a non-empty string; got {value!r}."
        )
    return value


def _reply(text: str, data: BaseModel) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=data.model_dump(mode="json"),
    )


@contextmanager
def _refusals() -> Iterator[None]:
    """Turns the ledger's refusals into tool errors (``isError``) that carry its message."""
    try:
        yield
    except (LedgerError, ValueError) as error:
        raise ToolError(str(error)) from error
