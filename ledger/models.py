"""What the ledger's tools return (their structured content), and how rupees are read and shown.

Amounts are integer paise in the file; a tool takes and returns rupees as a decimal number and
also says them the Indian way ("₹1,25,000.50").
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Literal

from babel.numbers import format_currency
from pydantic import BaseModel, Field

__all__ = [
    "Balance",
    "InvoiceList",
    "InvoiceRow",
    "InvoiceStatus",
    "PaymentOutcome",
    "SupplierList",
    "SupplierRow",
    "VoidOutcome",
    "paise",
    "rupees",
    "rupees_text",
    "say",
]

InvoiceStatus = Literal["open", "paid", "void"]

# A payment larger than this is a typo, not a supplier bill: ₹100 crore.
_MAX_PAISE = 100_00_00_000_00


def paise(amount: float) -> int:
    """Reads an amount in rupees (7800.5) into paise (780050).

    Raises ValueError, in words a person can act on, for anything that is not a positive
    amount with at most two decimals.
    """
    if not math.isfinite(amount) or amount <= 0:
        raise ValueError(
            f"The amount must be more than ₹0; got {amount!r}. Send rupees, e.g. 7800.50."
        )
    minor = Decimal(repr(amount)).scaleb(2)
    if minor != minor.to_integral_value():
        raise ValueError(
            f"The amount {amount!r} has more than two decimals; rupees have paise only (e.g. 7800.50)."
        )
    if minor > _MAX_PAISE:
        raise ValueError(
            f"The amount ₹{amount:,.2f} is beyond what the ledger records (₹100 crore)."
        )
    return int(minor)


def rupees(minor: int) -> float:
    """Paise as rupees, for structured content (exact for any amount the ledger holds)."""
    return float(Decimal(minor).scaleb(-2))


def rupees_text(minor: int) -> str:
    """Paise as a person reads rupees: "₹1,25,000.50" (negative for an advance, "-₹500.00")."""
    return format_currency(Decimal(minor).scaleb(-2), "INR", locale="en_IN")


def say(amount_inr: float) -> str:
    """Rupees from structured content, said as a person reads them ("₹1,25,000.50")."""
    return rupees_text(int(Decimal(repr(amount_inr)).scaleb(2)))


class SupplierRow(BaseModel):
    supplier_id: str = Field(description="The supplier's id, e.g. SUP-001.")
    name: str
    city: str
    balance_inr: float = Field(description="What is owed to the supplier now, in rupees.")


class SupplierList(BaseModel):
    suppliers: list[SupplierRow]


class Balance(BaseModel):
    supplier_id: str
    name: str
    invoiced_inr: float = Field(description="Invoices not voided, in rupees.")
    paid_inr: float = Field(description="Payments recorded, in rupees.")
    balance_inr: float = Field(description="Invoiced minus paid: what is owed now, in rupees.")
    open_invoices: list[str] = Field(description="Invoices not yet covered by payments.")


class InvoiceRow(BaseModel):
    invoice_id: str = Field(description="The invoice's id, e.g. INV-1004.")
    supplier_id: str
    amount_inr: float
    issued_on: str = Field(description="ISO date.")
    due_on: str = Field(description="ISO date.")
    status: InvoiceStatus
    void_reason: str | None = None


class InvoiceList(BaseModel):
    invoices: list[InvoiceRow]


class PaymentOutcome(BaseModel):
    """A payment recorded, or one that would be (then ``payment_id`` is None)."""

    payment_id: str | None = Field(description="PAY-0005; None for a preview.")
    supplier_id: str
    name: str
    amount_inr: float
    reference: str | None
    note: str | None
    balance_before_inr: float
    balance_after_inr: float
    invoices_settled: list[str] = Field(description="Invoices this payment marks paid.")
    summary: str


class VoidOutcome(BaseModel):
    invoice_id: str
    supplier_id: str
    name: str
    amount_inr: float
    reason: str
    balance_before_inr: float
    balance_after_inr: float
    summary: str
