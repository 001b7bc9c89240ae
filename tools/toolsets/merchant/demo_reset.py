"""Starts the demo afresh: every row the demo and its use made goes, and the demo is loaded again; never touches the audit log.

The README's tour uses requests up as it goes (an approved request stays approved), so a
second walk through it needs the demo as it was at first. Only a database holding nothing but
the demo merchants is reset: one with any other merchant is refused, whole, so a mistyped
``DATABASE_URL`` cannot empty a real one. The audit log is append-only, and stays: it keeps
what happened before the reset too.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select

import tools.toolsets.merchant.models  # noqa: F401  (registers the merchant tables on Base.metadata)
from tools.db import Base, Database
from tools.errors import ConflictError
from tools.people.tables import Tenant
from tools.toolsets.merchant.demo import FIESTA, HARBOR, DemoSummary, load_demo

__all__ = ["reset_demo"]

# Kept through a reset: the append-only audit and the processes' leases (a running process
# holds one while it serves).
_KEPT = frozenset({"audit_log", "process_leases"})
_DEMO_TENANTS = {FIESTA: "Fiesta Foods", HARBOR: "Harbor Books"}


async def reset_demo(db: Database, *, now: datetime | None = None) -> DemoSummary:
    """Deletes every row but the audit's, then loads the demo merchants again, in one transaction."""
    async with db.session(write=True) as session, session.begin():
        tenants = (await session.execute(select(Tenant.id, Tenant.name))).all()
        others = [name for tid, name in tenants if _DEMO_TENANTS.get(tid) != name]
        if others:
            listed = ", ".join(sorted(others))
            raise ConflictError(
                f"This database holds merchants other than the demo's ({listed}), so nothing "
                "was reset. Point DATABASE_URL at the demo's own database to start it afresh."
            )
        for table in reversed(Base.metadata.sorted_tables):
            if table.name not in _KEPT:
                await session.execute(delete(table))
    return await load_demo(db, now=now)
