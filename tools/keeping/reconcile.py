"""Settles cards a stopped process left ``executing``; never re-runs a write, never settles a live one.

A card is ``executing`` only between its claim and the commit of its write. Finding one whose
process is gone (see ``tools.cards.lease``) means that process stopped in between. For a write that
shares its transaction with the card's move to ``done`` (every reference tool), the database
rolled it back: nothing changed, and the card becomes ``interrupted``. For a tool that declares
side effects outside the database (an MCP server's), whose call is sent between the claim's
transaction and the outcome's (``tools.approving.sending``), nobody can know, and the card says
``outcome unknown`` so a person checks. Such a write answered after it was settled keeps the
card as people were shown it; its audit line records what the server said.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import select

from tools.audit.log import AuditEntry, Outcome
from tools.cards.lease import LeaseState, ProcessLease
from tools.cards.record import CardRecord, CardStatus
from tools.db import LEASES, PROPOSALS
from tools.deps import Deps

__all__ = ["INTERRUPTED_NOTE", "UNKNOWN_NOTE", "abandoned", "reconcile"]

INTERRUPTED_NOTE = "interrupted: the service stopped during the change, and nothing was changed"
UNKNOWN_NOTE = "outcome unknown: the service stopped during the change; check before trying again"

_CARDS, _LEASES = PROPOSALS, LEASES
_EXECUTING = (
    select(
        _CARDS,
        _LEASES.c.pid_space.label("lease_pid_space"),
        _LEASES.c.pid.label("lease_pid"),
        _LEASES.c.beat_at.label("lease_beat_at"),
        _LEASES.c.stopped_at.label("lease_stopped_at"),
    )
    .select_from(_CARDS.outerjoin(_LEASES, _CARDS.c.holder == _LEASES.c.holder))
    .where(_CARDS.c.status == CardStatus.EXECUTING)
)


async def reconcile(deps: Deps, *, now: datetime | None = None) -> list[CardRecord]:
    """Settles the ``executing`` cards whose process is gone; returns them as now stored.

    A card is settled when the process that claimed it stopped, went silent for longer than
    ``deps.lease.expiry``, or died on this machine; when it is this process and the press is
    no longer running here (its database dropped before the outcome could be recorded); or, when
    its claimant is unknown (claimed before processes held leases, or by one that never started
    its lease), once it was claimed longer ago than that grace period. Settling a card that is
    in fact still running is harmless for a write sharing its transaction: its move to ``done``
    then matches nothing and it rolls back; the lease keeps that from happening to a live one.
    """
    now = now or deps.clock()
    async with deps.db.engine.connect() as conn:
        rows = (await conn.execute(_EXECUTING)).all()
    settled: list[CardRecord] = []
    for row in rows:
        card = CardRecord.of(row)
        if _abandoned(deps.lease, card, _lease_of(row), now):
            record = await _settle(deps, card)
            if record is not None:
                settled.append(record)
    return settled


def _lease_of(row: Any) -> LeaseState | None:
    if row.lease_beat_at is None:
        return None
    return LeaseState(
        row.holder, row.lease_pid_space, row.lease_pid, row.lease_beat_at, row.lease_stopped_at
    )


def _abandoned(
    lease: ProcessLease, card: CardRecord, state: LeaseState | None, now: datetime
) -> bool:
    return abandoned(lease, card.card_id, card.holder, state, since=card.decided_at, now=now)


def abandoned(
    lease: ProcessLease,
    card_id: str,
    holder: str | None,
    state: LeaseState | None,
    *,
    since: datetime | None,
    now: datetime,
) -> bool:
    """Whether the process ``holder`` left its work on a card: this process, no longer doing
    it; another, gone (its ``state``); or unknown (no lease row), since longer ago than the
    grace period."""
    if holder == lease.holder:
        return not lease.is_running(card_id)
    if state is not None:
        return lease.gone(state, now)
    return since is None or since <= now - lease.expiry


async def _settle(deps: Deps, card: CardRecord) -> CardRecord | None:
    """``executing → interrupted | outcome_unknown`` and its audit line, in one transaction."""
    external = deps.external(card.tenantid, card.tool)
    status, note = (
        (CardStatus.UNKNOWN, UNKNOWN_NOTE)
        if external
        else (CardStatus.INTERRUPTED, INTERRUPTED_NOTE)
    )
    started = time.perf_counter()
    async with deps.db.begin(write=True) as conn:
        moved = await deps.cards.move(
            card.card_id, frm=CardStatus.EXECUTING, to=status, conn=conn, outcome=note
        )
        if not moved:
            return None  # finished (or settled by another process) since we looked
        entry = AuditEntry(
            at=deps.clock(),
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
        await deps.audit.add(conn, entry)
    return replace(card, status=status, outcome=note)
