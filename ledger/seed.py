"""The demo ledger's first contents: four suppliers of a Bengaluru food business, in INR.

Fixed ids, dates and amounts, so a demo and a test see the same books on every machine.
"""

from __future__ import annotations

import sqlite3

__all__ = ["seed"]

_SUPPLIERS = [
    ("SUP-001", "Nandi Dairy", "Bengaluru"),
    ("SUP-002", "Kaveri Packaging", "Mysuru"),
    ("SUP-003", "Malnad Spices", "Chikkamagaluru"),
    ("SUP-004", "Coastal Cold Chain", "Mangaluru"),
]

# id, supplier, paise, issued, due
_INVOICES = [
    ("INV-1001", "SUP-001", 18_500_00, "2026-10-01", "2026-10-31"),
    ("INV-1002", "SUP-002", 46_000_00, "2026-10-03", "2026-11-02"),
    ("INV-1003", "SUP-003", 7_820_00, "2026-10-08", "2026-11-07"),
    ("INV-1004", "SUP-001", 22_340_50, "2026-10-20", "2026-11-19"),
    ("INV-1005", "SUP-004", 31_200_00, "2026-10-22", "2026-11-21"),
    ("INV-1006", "SUP-002", 12_750_00, "2026-11-02", "2026-12-02"),
    ("INV-1007", "SUP-003", 15_400_00, "2026-11-05", "2026-12-05"),
    ("INV-1008", "SUP-001", 9_800_00, "2026-11-10", "2026-12-10"),
    ("INV-1009", "SUP-004", 4_450_00, "2026-11-18", "2026-12-18"),
]

# supplier, paise, reference, note, recorded
_PAYMENTS = [
    ("SUP-001", 18_500_00, "NEFT-N0411", "October milk", "2026-10-28T10:15:00+00:00"),
    ("SUP-002", 20_000_00, "NEFT-K1019", "Part payment on INV-1002", "2026-11-01T09:40:00+00:00"),
    ("SUP-004", 31_200_00, "RTGS-C2207", None, "2026-11-20T12:05:00+00:00"),
]


def seed(conn: sqlite3.Connection) -> None:
    """Writes the demo books into an empty ledger (invoice statuses are settled after)."""
    conn.executemany("INSERT INTO suppliers (id, name, city) VALUES (?, ?, ?)", _SUPPLIERS)
    conn.executemany(
        "INSERT INTO invoices (id, supplier_id, amount_paise, issued_on, due_on, status)"
        " VALUES (?, ?, ?, ?, ?, 'open')",
        _INVOICES,
    )
    conn.executemany(
        "INSERT INTO payments (supplier_id, amount_paise, reference, note, recorded_at)"
        " VALUES (?, ?, ?, ?, ?)",
        _PAYMENTS,
    )
