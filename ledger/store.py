"""The ledger's storage: suppliers, invoices and payments in one SQLite file, created on first use.

Every write runs in one ``BEGIN IMMEDIATE`` transaction with its idempotency check, so two
processes serving the same file (each stdio client starts its own) still record a payment once
per key. Amounts are integer paise here; rupees exist only at the edges.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ledger.models import InvoiceStatus
from ledger.seed import seed

__all__ = ["Ledger", "LedgerError", "Replay", "settle"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS suppliers (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invoices (
    id TEXT PRIMARY KEY,
    supplier_id TEXT NOT NULL REFERENCES suppliers (id),
    amount_paise INTEGER NOT NULL CHECK (amount_paise > 0),
    issued_on TEXT NOT NULL,
    due_on TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('open', 'paid', 'void')),
    void_reason TEXT
);
CREATE TABLE IF NOT EXISTS payments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    supplier_id TEXT NOT NULL REFERENCES suppliers (id),
    amount_paise INTEGER NOT NULL CHECK (amount_paise > 0),
    reference TEXT NOT NULL,
    note TEXT,
    idempotency_key TEXT UNIQUE,
    recorded_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS replies (
    idempotency_key TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
"""

_Model = TypeVar("_Model", bound=BaseModel)


class LedgerError(Exception):
    """A request the ledger refuses; the message says what was wrong and what to do."""


class Replay(Generic[_Model]):
    """What a write returns: its result, and whether an earlier call with the key produced it."""

    def __init__(self, result: _Model, *, replayed: bool, recorded_at: str) -> None:
        self.result = result
        self.replayed = replayed
        self.recorded_at = recorded_at


class Ledger:
    """One ledger file. Opening it creates and seeds it the first time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with self.transaction() as conn:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            if conn.execute("SELECT COUNT(*) FROM suppliers").fetchone()[0] == 0:
                seed(conn)
                for (supplier_id,) in conn.execute("SELECT id FROM suppliers").fetchall():
                    settle(conn, supplier_id)

    @contextmanager
    def transaction(self, *, commit: bool = True) -> Iterator[sqlite3.Connection]:
        """One connection, one transaction: committed on success, rolled back on error.

        With ``commit=False`` it is always rolled back: a read, or a preview that runs a
        write's arithmetic to show its outcome.
        """
        # WAL lets a read proceed while another process writes; busy_timeout makes a second
        # writer wait its turn instead of failing with "database is locked".
        with closing(sqlite3.connect(self.path, timeout=10, isolation_level=None)) as conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("BEGIN IMMEDIATE" if commit else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT" if commit else "ROLLBACK")

    def once(
        self,
        key: str | None,
        tool: str,
        arguments: dict[str, Any],
        model: type[_Model],
        write: Callable[[sqlite3.Connection], _Model],
    ) -> Replay[_Model]:
        """Runs ``write`` unless ``key`` already ran this tool; then returns that first result.

        A key already used with other arguments or another tool is refused: the caller reused
        a key by mistake, and doing either write would be a guess.
        """
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.transaction() as conn:
            if key is not None:
                earlier = conn.execute(
                    "SELECT tool, arguments, result, recorded_at FROM replies"
                    " WHERE idempotency_key = ?",
                    (key,),
                ).fetchone()
                if earlier is not None:
                    return _replay(key, tool, arguments, model, earlier)
            result = write(conn)
            if key is not None:
                conn.execute(
                    "INSERT INTO replies (idempotency_key, tool, arguments, result, recorded_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (key, tool, _canonical(arguments), result.model_dump_json(), now),
                )
            return Replay(result, replayed=False, recorded_at=now)


def _replay(
    key: str,
    tool: str,
    arguments: dict[str, Any],
    model: type[_Model],
    earlier: tuple[str, str, str, str],
) -> Replay[_Model]:
    earlier_tool, earlier_arguments, result, recorded_at = earlier
    if earlier_tool != tool or earlier_arguments != _canonical(arguments):
        raise LedgerError(
            f"The idempotency key {key!r} was already used at {recorded_at} for {earlier_tool}"
            f" with other arguments ({earlier_arguments}). Nothing was done. Send a new key"
            " for a new request."
        )
    return Replay(model.model_validate_json(result), replayed=True, recorded_at=recorded_at)


def _canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"))


def settle(conn: sqlite3.Connection, supplier_id: str) -> list[str]:
    """Marks invoices paid, oldest first, as far as the supplier's payments cover them.

    Returns the invoices that became paid.
    """
    paid = conn.execute(
        "SELECT COALESCE(SUM(amount_paise), 0) FROM payments WHERE supplier_id = ?",
        (supplier_id,),
    ).fetchone()[0]
    rows = conn.execute(
        "SELECT id, amount_paise, status FROM invoices WHERE supplier_id = ? AND status != 'void'"
        " ORDER BY issued_on, id",
        (supplier_id,),
    ).fetchall()
    newly_paid: list[str] = []
    covered = 0
    for invoice_id, amount, status in rows:
        covered += amount
        wanted: InvoiceStatus = "paid" if covered <= paid else "open"
        if wanted != status:
            conn.execute("UPDATE invoices SET status = ? WHERE id = ?", (wanted, invoice_id))
            if wanted == "paid":
                newly_paid.append(invoice_id)
    return newly_paid
