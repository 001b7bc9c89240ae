"""The demo's own MCP server: the supplier ledger (``ledger``), connected to Fiesta Foods.

``countersign demo`` (and so ``make run``) connects it once, over stdio, with the rules a
merchant would write for it: its annotations trusted, a payment's amount counting toward the
two-approver threshold, one live card per supplier, its amount and note editable, a preview
from its companion read tool, and each write's card sentence ("Pay ₹7,800.50 to SUP-001,
reference NEFT-N0533").
"""

from __future__ import annotations

import sys
from pathlib import Path

from tools.db import Database
from tools.toolsets.mcp.config import Preview, SourceConfig, ToolRule
from tools.toolsets.mcp.store import Sources

__all__ = ["DEMO_LEDGER", "connect_demo_ledger", "demo_ledger"]

DEMO_LEDGER = "ledger"


def demo_ledger(path: Path) -> SourceConfig:
    """The demo ledger's source, its records in the SQLite file ``path``."""
    return SourceConfig(
        name=DEMO_LEDGER,
        command=sys.executable,
        args=("-m", "ledger", "--db", str(path)),
        trust_annotations=True,
        rules={
            "record_payment": ToolRule(
                amount="amount",
                unit="major",
                targets=("supplier_id",),
                editable=("amount", "note"),
                preview=Preview(kind="tool", name="preview_payment"),
                sentence="Pay {amount} to {supplier_id}, reference {reference}",
            ),
            "void_invoice": ToolRule(
                targets=("invoice_id",),
                editable=("reason",),
                sentence="Void invoice {invoice_id}: {reason}",
            ),
        },
    )


async def connect_demo_ledger(db: Database, tenantid: int, path: Path) -> bool:
    """Connects the demo ledger to ``tenantid`` unless it has a source of that name; True if
    it did."""
    sources = Sources(db)
    if any(source.name == DEMO_LEDGER for source in await sources.all(tenantid)):
        return False
    await sources.put(tenantid, demo_ledger(path))
    return True
