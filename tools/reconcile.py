"""At start-up, settles cards a stopped process left ``executing``; never re-runs a write.

A card is ``executing`` only between its claim and the commit of its write. Finding one at
start-up means a process died in between. For a write that shares its transaction with the
card's move to ``done`` (every reference tool), the database rolled it back: nothing changed,
and the card becomes ``interrupted``. For a tool that declares side effects outside the
database, nobody can know, and the card says ``outcome unknown`` so a person checks.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

from tools.audit import AuditEntry, Outcome
from tools.proposals import CardRecord, CardStatus

if TYPE_CHECKING:
    from tools.registry import Registry

__all__ = ["INTERRUPTED_NOTE", "UNKNOWN_NOTE", "reconcile"]

INTERRUPTED_NOTE = "interrupted: the service stopped during the change, and nothing was changed"
UNKNOWN_NOTE = "outcome unknown: the service stopped during the change; check before trying again"


async def reconcile(
    registry: Registry, *, claimed_before: datetime | None = None
) -> list[CardRecord]:
    """Settles ``executing`` cards (only those claimed before ``claimed_before``, if given).

    A server passes the moment it started, so it never settles a card its own first presses
    claimed while this ran; and, while running, the current time less a grace period: a card
    claimed just before its database connection dropped would otherwise keep showing its
    buttons, and answer "already approved", until the next restart. Settling a card that is in
    fact still running elsewhere is safe for a write that shares its transaction: that write's
    move to ``done`` then matches nothing and it rolls back.
    """
    settled: list[CardRecord] = []
    for card in await registry.cards.in_state(CardStatus.EXECUTING, claimed_before=claimed_before):
        tool = registry.lookup_or_none(card.tool)
        external = tool is not None and tool.external
        status, note = (
            (CardStatus.UNKNOWN, UNKNOWN_NOTE)
            if external
            else (CardStatus.INTERRUPTED, INTERRUPTED_NOTE)
        )
        started = time.perf_counter()
        if not await registry.cards.move(
            card.card_id, frm=CardStatus.EXECUTING, to=status, outcome=note
        ):
            continue  # finished (or settled by another process) since we looked
        await registry.audit.write(
            AuditEntry(
                at=registry.clock(),
                agent="(reconciler)",
                tool=card.tool,
                userid=card.userid,
                tenantid=card.tenantid,
                scope="write",
                outcome=Outcome.UNKNOWN if external else Outcome.INTERRUPTED,
                detail=note,
                args=card.args,
                card_id=card.card_id,
                took_ms=(time.perf_counter() - started) * 1000,
            )
        )
        record = await registry.cards.get(card.card_id)
        assert record is not None
        settled.append(record)
    return settled
