"""Sends an approved write whose effect leaves the database (an MCP server's tool); never inside a transaction.

A native write shares one transaction with its card's move to ``done``: it commits or it did
not happen. A write that goes to another system cannot be in that transaction, and holding one
open while it runs only made everyone else wait. A merchant's server that took 15 s to answer
held SQLite's write lock for those 15 s (it was taken as soon as the merchant's name was read
for the write's context): another person's press on an unrelated card took 14 s to be decided,
a chat message 14 s to be answered, and with a server slower than the 30 s busy timeout both
failed. On PostgreSQL it held a pooled connection for as long.

So such a write runs in three steps, none of them waiting on the others' locks:

1. the claim with its "approved / executing" line, committed before anything leaves
   (``tools.approving.approval``);
2. the card's preview asked again and compared (``tools.approving.as_shown``), then the ``tools/call``,
   with no database session open and no lock held;
3. the outcome, in a transaction of its own, moving the card only from ``executing``.

A process that stops between 2 and 3 leaves the card ``executing``; the reconciler settles it as
"outcome unknown" (``tools.keeping.reconcile``), since the call may have been answered.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from tools.approving.as_shown import ensure_as_shown
from tools.approving.trail import Trail
from tools.audit.log import Outcome
from tools.caller import Caller
from tools.cards.record import CardRecord, CardStatus
from tools.deps import Deps
from tools.errors import CountersignError, OutcomeUnknownError
from tools.people.tables import Tenant
from tools.tool import ExecuteFn, Result, Tool, ToolContext

__all__ = ["described", "recorded", "send"]


async def send(
    tool: Tool,
    execute: ExecuteFn,
    deps: Deps,
    *,
    record: CardRecord,
    clean: BaseModel,
    caller: Caller,
) -> Result:
    """Re-reads what the claimed card showed and sends the write, as approved when it was
    claimed, with no database session open; the server's answer as a result.

    Raises a ``CountersignError``: one that says nothing was sent (the server unreachable, its
    preview no longer what the card showed) or ``OutcomeUnknownError`` (it may have happened).
    The caller moves the card to ``failed`` or ``outcome_unknown`` with it.
    """
    assert record.decided_at is not None
    ctx = await _outside(deps, caller, record.decided_at, record)
    await ensure_as_shown(tool, ctx, clean, record)
    try:
        return await execute(ctx, clean)
    except CountersignError:
        raise
    except Exception as broken:
        # Raised while the call was with the server, or after its answer came: whether it
        # happened is not known, and "nothing was changed" would be a guess.
        raise OutcomeUnknownError(
            f"outcome unknown: it failed unexpectedly ({type(broken).__name__}: {broken}) while "
            "the call was with the server; check that system before asking again"
        ) from broken


async def _outside(deps: Deps, caller: Caller, at: datetime, record: CardRecord) -> ToolContext:
    """The write's context, with a session bound to no database.

    The merchant's name is read (when not known) in a read transaction that ends before the
    call; the context then holds a session that cannot run a statement, so an external write
    that tried to use the database would fail loudly rather than open a transaction while it
    waits on its server.
    """
    async with deps.db.tenant_session(caller.tenantid) as session:
        ctx = await deps.context(
            session, caller, at, record.card_id, approved_by=record.decided_by_name
        )
        # Its card may show an amount as money: the re-read of what it showed needs these.
        merchant = await session.get(Tenant, caller.tenantid)
    assert merchant is not None  # the caller's own merchant, whose card this is
    return replace(ctx, session=AsyncSession(), currency=merchant.currency, locale=merchant.locale)


async def recorded(deps: Deps, trail: Trail, record: CardRecord, result: Result) -> CardRecord:
    """``executing → done`` with its audit line, in one transaction; the card as then stored.

    When the card is no longer ``executing`` (a reconciler settled it as outcome unknown
    while the server took its time), it keeps what people were shown, and the audit line
    still records what the server answered, for whoever checks.
    """
    outcome = described(result)
    async with deps.db.begin() as conn:
        moved = await deps.cards.move(
            record.card_id, frm=CardStatus.EXECUTING, to=CardStatus.DONE, conn=conn, outcome=outcome
        )
        if moved:
            await trail.add(conn, Outcome.DONE, outcome, result.count)
            return replace(record, status=CardStatus.DONE, outcome=outcome)
        stored = await deps.cards.get(record.card_id, conn=conn)
        assert stored is not None
        late = f"{outcome} (answered after the card was settled as {stored.status})"
        await trail.add(conn, Outcome.DONE, late, result.count)
    return stored


def described(result: Result) -> str:
    """A write's outcome as the card shows it."""
    if result.note:
        return result.note
    return f"{result.count} row(s) changed" if result.count != 1 else "done"
