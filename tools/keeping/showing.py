"""Which decided cards are still to be shown, and which process shows each; never shows one itself.

A decision is shown when every copy of its card was updated and the channel's audit line posted
(``bot.presses.decisions``). A card records when its decision was shown, and only after it went
out: a process that dies after a write committed and before Slack is told leaves the card
unshown, and it is redrawn, instead of live buttons for good, no audit line, and a second press
saying only "already approved", privately.

Whoever shows a decision first takes the showing with one conditional UPDATE (the process that
decided it, a press on the decided card, the sweep), so two processes never both post its audit
line. The sweep takes one over only once the process that held it is gone, as the reconciler
judges a card left executing (``tools.keeping.reconcile``).

A decision is recorded shown only for the copies it was shown on (``record``): under the lock of
the row that keeps where the copies are, the copies stored then must be the ones just drawn.
Otherwise a card pressed while its turn is still recording its channel copy would be recorded
shown with no copy at all, and that copy keep live buttons and no audit line for good. A copy
recorded once a decision is shown reopens it (``tools.cards.store``), so
whoever records a copy late draws it, or a sweep does if that process dies first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update

from tools.cards.lease import LeaseState
from tools.cards.record import CardRecord
from tools.cards.store import DECIDED
from tools.db import BATCHES, LEASES, PROPOSALS
from tools.deps import Deps
from tools.keeping.reconcile import abandoned

__all__ = ["Covers", "give_back", "record", "take", "take_over", "unshown"]

# Whether the copies a card's stored ``posting`` value names were all shown (the caller's
# judgement: the engine does not read placements).
Covers = Callable[[dict[str, Any] | None], bool]

_CARDS, _LEASES = PROPOSALS, LEASES
# The process answering for a card's showing: the one that took it, or, before anyone did,
# the one that decided it (an approval's claimant).
_ANSWERING = func.coalesce(_CARDS.c.showing_by, _CARDS.c.holder)
_UNSHOWN = (
    select(
        _CARDS,
        _LEASES.c.holder.label("lease_holder"),
        _LEASES.c.pid_space.label("lease_pid_space"),
        _LEASES.c.pid.label("lease_pid"),
        _LEASES.c.beat_at.label("lease_beat_at"),
        _LEASES.c.stopped_at.label("lease_stopped_at"),
    )
    .select_from(_CARDS.outerjoin(_LEASES, _LEASES.c.holder == _ANSWERING))
    .where(
        _CARDS.c.shown_at.is_(None),
        _CARDS.c.status.in_(sorted(s.value for s in DECIDED)),
        # The items of a card of several are listed too: the sweep redraws the card they are in
        # once it has settled. Left out, a batch decided by a process killed before Slack was
        # told kept live buttons for good (13 cards in a soak).
    )
    .order_by(_CARDS.c.decided_at)
)


async def take(deps: Deps, card_id: str, *, now: datetime) -> CardRecord | None:
    """Takes the showing of a decided card's decision for this process; the card as it now
    stands, or None: it is shown already, not decided, or another process is showing it.

    A card nobody took yet is taken at once: by the process that just decided it, or by a
    press on it after that process died.
    """
    first = await deps.cards.get(card_id)
    if first is None or first.shown_at is not None or first.status not in DECIDED:
        return None
    if first.showing_by is None and await take_over(deps, first, now=now):
        return first
    for card, state in await _unshown(deps, card_id):
        if _left(deps, card, state, now, sweep=False) and await take_over(deps, card, now=now):
            return card
    return None


async def unshown(deps: Deps, *, now: datetime) -> list[CardRecord]:
    """The decided cards whose decision is not shown and which nobody answers for any more.

    For the sweep: a card nobody took yet waits until the process that decided it is gone
    (it would otherwise race every decision its own process is about to show), and one a
    process failed to show waits as long again as it has been tried (a copy Slack keeps
    failing is not tried every few seconds for good).
    """
    return [
        card for card, state in await _unshown(deps) if _left(deps, card, state, now, sweep=True)
    ]


async def take_over(deps: Deps, card: CardRecord, *, now: datetime) -> bool:
    """Takes the showing of ``card`` as read, for this process, unless someone did meanwhile."""
    return await deps.cards.take_showing(
        card.card_id,
        by=deps.lease.holder,
        seen_by=card.showing_by,
        seen_at=card.showing_at,
        now=now,
    )


async def give_back(deps: Deps, card_id: str) -> None:
    """Gives up this process's showing of a decision it found no copy of, while unshown.

    Pressed on a message its turn had not yet recorded, the decision has nowhere to go; the
    turn recording the copy then takes the showing at once and draws it, audit line and all,
    instead of leaving the line to this process's next sweep.
    """
    stmt = (
        update(_CARDS)
        .where(
            _CARDS.c.id == card_id,
            _CARDS.c.shown_at.is_(None),
            _CARDS.c.showing_by == deps.lease.holder,
        )
        .values(showing_by=None, showing_at=None)
    )
    async with deps.db.begin(write=True) as conn:
        await conn.execute(stmt)


async def record(
    deps: Deps,
    card_ids: Sequence[str],
    *,
    batch_id: str | None,
    covers: Covers,
    now: datetime,
) -> bool:
    """Records these cards' decision shown if the copies stored now are covered by the ones
    shown; False (nothing recorded) when a copy was recorded since they were read.

    ``batch_id``: the cards are a batch's items, whose copies the batch's row keeps. The row
    is read under its lock, as a copy is recorded (``change_posting``): a copy recorded after
    this is drawn by its recorder, one recorded before it makes this return False.
    """
    table, key = (BATCHES, batch_id) if batch_id is not None else (PROPOSALS, card_ids[0])
    where = select(table.c.surface).where(table.c.id == key).with_for_update()
    shown = (
        update(_CARDS)
        .where(_CARDS.c.id.in_(list(card_ids)), _CARDS.c.shown_at.is_(None))
        .values(shown_at=now)
    )
    async with deps.db.begin(write=True) as conn:
        row = (await conn.execute(where)).first()
        if row is None or not covers(row.surface):
            return False
        await conn.execute(shown)
    return True


async def _unshown(
    deps: Deps, card_id: str | None = None
) -> list[tuple[CardRecord, LeaseState | None]]:
    stmt = _UNSHOWN if card_id is None else _UNSHOWN.where(_CARDS.c.id == card_id)
    async with deps.db.engine.connect() as conn:
        rows = (await conn.execute(stmt)).all()
    return [(CardRecord.of(row), _lease_of(row)) for row in rows]


def _lease_of(row: Any) -> LeaseState | None:
    if row.lease_beat_at is None:
        return None
    return LeaseState(
        row.lease_holder,
        row.lease_pid_space,
        row.lease_pid,
        row.lease_beat_at,
        row.lease_stopped_at,
    )


def _left(
    deps: Deps,
    card: CardRecord,
    state: LeaseState | None,
    now: datetime,
    *,
    sweep: bool,
) -> bool:
    """Whether this process may take the card's showing: nobody answers for it any more."""
    lease = deps.lease
    if card.showing_by is None:
        if not sweep:
            return True
        # A card decided under no lease (a rejection, an expiry) waits the grace period.
        since = card.decided_at or card.expires_at
        return abandoned(lease, card.card_id, card.holder, state, since=since, now=now)
    if sweep and not _due(card, now):
        return False
    return abandoned(lease, card.card_id, card.showing_by, state, since=card.showing_at, now=now)


def _due(card: CardRecord, now: datetime) -> bool:
    """Whether it is time to try a card again: as long since its last try as it was tried."""
    assert card.showing_at is not None
    started = card.decided_at or card.created_at
    return now - card.showing_at >= card.showing_at - started
