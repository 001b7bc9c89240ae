"""A supplier ledger served over MCP: the merchant's own system the demo connects as a source.

It stands in for what a merchant runs beside Countersign (an accounting package, a bank
portal): a small food business's suppliers, their invoices and the payments made to them, in
Indian rupees, kept in one SQLite file that is created and seeded on first start. It is the
demo's MCP source, and the tests drive it through the official MCP SDK's client.

Reads (``list_suppliers``, ``supplier_balance``, ``list_invoices``, and ``preview_payment``,
the companion read of a payment) change nothing. The writes, ``record_payment`` and
``void_invoice``, honour the request ``_meta`` key ``dev.countersign/idempotency-key``: sent
again with the same key, a write does nothing and answers with the first call's result, so a
card approved once is recorded once however often its call is delivered. Each payment keeps its
key in the ``payments`` table.

Run it by hand::

    python -m ledger --db ledger.db                                  # stdio
    python -m ledger --db ledger.db --http --host 127.0.0.1 --port 8765  # http://…/mcp

It imports nothing of the bot or the engine (an import-linter contract holds it to that): it is
someone else's server, only shipped in this repository for the demo, so it lives beside them.
"""

from ledger.server import IDEMPOTENCY_KEY, build_server
from ledger.store import Ledger

__all__ = ["IDEMPOTENCY_KEY", "Ledger", "build_server"]
