"""The ledger's questions and changes, each on one open transaction of the store.

Reads never change a row. ``pay`` and ``void`` are the only writes; the preview shares their
arithmetic and rolls back, so what it shows is what the payment would do.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from ledger.models import (
    Balance,
    InvoiceList,
    InvoiceRow,
    InvoiceStatus,
    PaymentOutcome,
    SupplierList,
    SupplierRow,
    VoidOutcome,
    rupees,
    rupees_text,
)
from ledger.store import LedgerError, settle

__all__ = ["balance", "invoices", "pay", "suppliers", "void"]


def suppliers(conn: sqlite3.Connection) -> SupplierList:
    rows = conn.execute("SELECT id, name, city FROM suppliers ORDER BY id").fetchall()
    return SupplierList(
        suppliers=[
            SupplierRow(supplier_id=sid, name=name, city=city, balance_inr=rupees(_owed(conn, sid)))
            for sid, name, city in rows
        ]
    )


def balance(conn: sqlite3.Connection, supplier_id: str) -> Balance:
    name = _supplier(conn, supplier_id)
    invoiced, paid = _totals(conn, supplier_id)
    open_ids = [
        row[0]
        for row in conn.execute(
            "SELECT id FROM invoices WHERE supplier_id = ? AND status = 'open' ORDER BY issued_on, id",
            (supplier_id,),
        )
    ]
    return Balance(
        supplier_id=supplier_id,
        name=name,
        invoiced_inr=rupees(invoiced),
        paid_inr=rupees(paid),
        balance_inr=rupees(invoiced - paid),
        open_invoices=open_ids,
    )


def invoices(
    conn: sqlite3.Connection, supplier_id: str | None, status: InvoiceStatus | None
) -> InvoiceList:
    if supplier_id is not None:
        _supplier(conn, supplier_id)
    rows = conn.execute(
        "SELECT id, supplier_id, amount_paise, issued_on, due_on, status, void_reason"
        " FROM invoices WHERE (? IS NULL OR supplier_id = ?) AND (? IS NULL OR status = ?)"
        " ORDER BY issued_on, id",
        (supplier_id, supplier_id, status, status),
    ).fetchall()
    return InvoiceList(
        invoices=[
            InvoiceRow(
                invoice_id=iid,
                supplier_id=sid,
                amount_inr=rupees(amount),
                issued_on=issued,
                due_on=due,
                status=state,
                void_reason=reason,
            )
            for iid, sid, amount, issued, due, state, reason in rows
        ]
    )


def pay(
    conn: sqlite3.Connection,
    supplier_id: str,
    amount: int,
    *,
    reference: str | None,
    note: str | None,
    key: str | None,
) -> PaymentOutcome:
    """Records a payment (``reference`` None: computes it only; the caller rolls back)."""
    name = _supplier(conn, supplier_id)
    before = _owed(conn, supplier_id)
    cursor = conn.execute(
        "INSERT INTO payments (supplier_id, amount_paise, reference, note, idempotency_key,"
        " recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
        (supplier_id, amount, reference or "(preview)", note, key, _now()),
    )
    settled = settle(conn, supplier_id)
    after = before - amount
    payment_id = f"PAY-{cursor.lastrowid:04d}" if reference is not None else None
    advance = f" (an advance of {rupees_text(-after)})" if after < 0 else ""
    done = f"Recorded {payment_id}" if payment_id else "Would record"
    summary = (
        f"{done}: {rupees_text(amount)} to {supplier_id} {name}"
        + (f" (reference {reference})" if reference else "")
        + f". Balance {rupees_text(before)} → {rupees_text(after)}{advance}."
        + (f" Marks paid: {', '.join(settled)}." if settled else "")
    )
    return PaymentOutcome(
        payment_id=payment_id,
        supplier_id=supplier_id,
        name=name,
        amount_inr=rupees(amount),
        reference=reference,
        note=note,
        balance_before_inr=rupees(before),
        balance_after_inr=rupees(after),
        invoices_settled=settled,
        summary=summary,
    )


def void(conn: sqlite3.Connection, invoice_id: str, reason: str) -> VoidOutcome:
    row = conn.execute(
        "SELECT supplier_id, amount_paise, status, void_reason FROM invoices WHERE id = ?",
        (invoice_id,),
    ).fetchone()
    if row is None:
        raise LedgerError(
            f"There is no invoice {invoice_id}. List them with list_invoices; ids look like INV-1004."
        )
    supplier_id, amount, status, earlier_reason = row
    if status == "void":
        raise LedgerError(f"{invoice_id} is already void ({earlier_reason}). Nothing was changed.")
    if status == "paid":
        raise LedgerError(
            f"{invoice_id} is paid, so it cannot be voided. Nothing was changed; record a"
            " credit with the supplier instead."
        )
    name = _supplier(conn, supplier_id)
    before = _owed(conn, supplier_id)
    conn.execute(
        "UPDATE invoices SET status = 'void', void_reason = ? WHERE id = ?", (reason, invoice_id)
    )
    settle(conn, supplier_id)
    after = before - amount
    return VoidOutcome(
        invoice_id=invoice_id,
        supplier_id=supplier_id,
        name=name,
        amount_inr=rupees(amount),
        reason=reason,
        balance_before_inr=rupees(before),
        balance_after_inr=rupees(after),
        summary=(
            f"Voided {invoice_id} ({rupees_text(amount)}) of {supplier_id} {name}: {reason}."
            f" Balance {rupees_text(before)} → {rupees_text(after)}."
        ),
    )


def _supplier(conn: sqlite3.Connection, supplier_id: str) -> str:
    row = conn.execute("SELECT name FROM suppliers WHERE id = ?", (supplier_id,)).fetchone()
    if row is None:
        known = ", ".join(
            f"{sid} {name}"
            for sid, name in conn.execute("SELECT id, name FROM suppliers ORDER BY id")
        )
        raise LedgerError(f"There is no supplier {supplier_id!r}. The suppliers are: {known}.")
    return str(row[0])


def _totals(conn: sqlite3.Connection, supplier_id: str) -> tuple[int, int]:
    invoiced = conn.execute(
        "SELECT COALESCE(SUM(amount_paise), 0) FROM invoices"
        " WHERE supplier_id = ? AND status != 'void'",
        (supplier_id,),
    ).fetchone()[0]
    paid = conn.execute(
        "SELECT COALESCE(SUM(amount_paise), 0) FROM payments WHERE supplier_id = ?", (supplier_id,)
    ).fetchone()[0]
    return int(invoiced), int(paid)


def _owed(conn: sqlite3.Connection, supplier_id: str) -> int:
    invoiced, paid = _totals(conn, supplier_id)
    return invoiced - paid


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
