"""Moves cards on without a press: expiry shown when a card's time runs out, escalation to owners,
decisions never shown redrawn.

Each sweep runs in every process (``bot.server`` calls them every few seconds). Which process
acts on a card is decided by one conditional UPDATE per card: the one whose statement matched
updates the card's messages; the others matched nothing and do nothing. Without the expiry
sweep a card whose time ran out kept "Approval needed" and live buttons until somebody pressed
it, and the App Home kept counting it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Protocol

import structlog

from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import Placement, SlackPlacement
from bot.presses.copies import send_copies
from bot.presses.decisions import redraw as redraw_decision
from bot.presses.decisions import show, update_copies
from bot.presses.drawing import covering
from bot.runtime import receipts
from bot.services import Services
from tools import CardRecord, Issuee

__all__ = ["Shows", "escalate", "expire", "redraw"]

log = structlog.get_logger("bot.presses.sweeps")

# The least a merchant's policy may set: no card is escalated sooner.
_SOONEST = timedelta(seconds=60)


class Shows(Protocol):
    """What a sweep needs of a mounted surface: an adapter for a copy, and a per-person refresh."""

    async def with_adapter(
        self, placement: Placement, work: Callable[[Adapter], Awaitable[None]]
    ) -> bool: ...

    async def cards_changed(self, record: CardRecord) -> None: ...


async def expire(services: Services, mounted: Mapping[str, Shows], *, now: datetime) -> int:
    """Expires every card whose time ran out and shows it expired on every copy; how many."""
    records = await services.registry.sweeps.expire_due(now)
    for record in records:
        card = await cards.of_record(services.registry, record)
        await _guarded(record, _each_platform(record, card, mounted, _shown(services, card)))
        log.info("card_expired", card_id=record.card_id, tenant=record.tenantid)
    return len(records)


async def escalate(
    services: Services, mounted: Mapping[str, Shows], *, now: datetime, after: int
) -> int:
    """Sends cards undecided past the merchant's delay to its owners too, once each: cards
    routed away from their asker, and cards still waiting for a second approver.

    ``after`` is the service's delay in seconds for merchants whose policy sets none.
    """
    registry = services.registry
    delays: dict[int, timedelta] = {}
    done = 0
    for card in await registry.sweeps.escalation_due(now - _SOONEST, now):
        if card.tenantid not in delays:
            policy = await registry.policy(card.tenantid)
            delays[card.tenantid] = timedelta(seconds=policy.escalate_after or after)
        if card.created_at > now - delays[card.tenantid]:
            continue
        bosses = [
            o
            for o in await registry.sweeps.owners(card.tenantid)
            if not _issued(card, o) and o.userid not in card.kept_out
        ]
        names = ", ".join(o.name for o in bosses) or "no owner beyond those already asked"
        # "Issued", not "sent": this line commits before any copy goes out, and it once said
        # "sent to Priya" when Slack refused her DM. Whether each owner was told is audited
        # once their copies went out (or did not).
        record = await registry.sweeps.escalate(
            card.card_id, [*card.issued_to, *bosses], now, detail=f"issued to {names}"
        )
        if record is None:
            continue  # another process escalated it first, or it ended meanwhile
        await _guarded(record, _tell(services, mounted, record, bosses))
        done += 1
    return done


async def redraw(services: Services, mounted: Mapping[str, Shows], *, now: datetime) -> int:
    """Shows every decision that was never shown and that no live process answers for; how many.

    A process that died after a card's write committed, before its copies were updated, left
    live buttons on a decided card for good, and no audit line. Each such card is taken by
    one conditional UPDATE (``tools.keeping.showing``): whichever process takes it redraws every copy
    and posts the audit line; the others do nothing. It is recorded shown only once all of it
    went out, so a failure here leaves it for a later sweep.
    """
    registry, done = services.registry, 0
    for card in await registry.showing.unshown(now):
        # An item of a card of several is shown as that card, once it has settled; one item
        # taken redraws it and records every item shown, so its other items match no more.
        whole = await cards.of_record(registry, card) if card.batch_id else cards.one(card)
        if whole.open or not await registry.showing.take_over(card, now):
            continue  # still waiting on an item, or another process took it first
        if await _redrawn(services, mounted, card, whole):
            done += 1
    return done


async def _redrawn(
    services: Services, mounted: Mapping[str, Shows], card: CardRecord, whole: Card
) -> bool:
    """Shows a decision on every platform its card has copies on, and records it shown for
    the copies it went out on; whether it did.

    A card with no copy recorded yet (pressed while its turn was still recording it) is not
    shown by drawing nothing: recorded shown then, the copy its turn recorded next kept live
    buttons and no audit line for good.
    """
    drawn: list[list[Placement] | None] = []

    async def work(adapter: Adapter) -> None:
        drawn.append(await redraw_decision(services, adapter, whole))

    await _guarded(card, _each_platform(card, whole, mounted, work))
    platforms = {p.platform for p in whole.placements}
    copies = [p for shown in drawn if shown is not None for p in shown]
    complete = bool(platforms) and len(drawn) == len(platforms) and None not in drawn
    if complete:
        items = [item.card_id for item in whole.items]
        batch = whole.card_id if whole.several else None
        covers = covering(copies, platforms)
        complete = await services.registry.showing.record(items, batch_id=batch, covers=covers)
    log.info("decision_redrawn", card_id=card.card_id, status=str(card.status), shown=complete)
    return complete


async def _guarded(record: CardRecord, work: Awaitable[None]) -> None:
    """Shows one card; a failure is logged and the sweep goes on to the next card.

    The card's move is already committed with its audit line: one surface failing to show it
    (a Teams proactive call refused, Slack rate-limiting) must not leave the cards after it
    unshown, nor stop the loop that also keeps this process's lease alive.
    """
    try:
        await work
    except Exception:  # logged in full; the next sweep cannot retry a committed move
        log.exception("sweep_show_failed", card_id=record.card_id, status=str(record.status))


def _shown(services: Services, card: Card) -> Callable[[Adapter], Awaitable[None]]:
    async def work(adapter: Adapter) -> None:
        await show(services, adapter, card)

    return work


def _issued(card: CardRecord, person: Issuee) -> bool:
    return any(i.userid == person.userid for i in card.issued_to)


async def _tell(
    services: Services, mounted: Mapping[str, Shows], record: CardRecord, bosses: list[Issuee]
) -> None:
    """Shows the wider list of approvers on every copy and sends the owners their copies, once.

    A card of several is escalated item by item (each is a card); its owners get one copy of
    it on each platform, sent by whichever process claims that first.
    """
    card = await cards.of_record(services.registry, record)

    async def work(adapter: Adapter) -> None:
        await update_copies(services, adapter, card)
        thread = next((p for p in card.placements if p.platform == adapter.platform), None)
        if thread is None or not thread.token or not bosses or not card.live:
            return
        registry = services.registry
        key = card.once(f"escalated-{adapter.platform}")
        if not await receipts.claim(services.db, key, registry.now()):
            return
        sent = await send_copies(
            services,
            adapter,
            card,
            bosses,
            installation=_installation(thread),
            token=thread.token,
        )
        await _told(services, record, adapter.platform, bosses, {p.person for p in sent})

    await _each_platform(record, card, mounted, work)
    log.info("card_escalated", card_id=record.card_id, owners=[o.userid for o in bosses])


async def _told(
    services: Services,
    record: CardRecord,
    platform: str,
    bosses: list[Issuee],
    reached: set[int | None],
) -> None:
    """Audits which owners an escalation's copies reached on one platform, and which not."""
    where = "Teams" if platform == "teams" else "Slack"
    told = [o.name for o in bosses if o.userid in reached]
    missed = [o.name for o in bosses if o.userid not in reached]
    lines = [f"{', '.join(told)} told in {where}"] if told else []
    if missed:
        lines.append(f"{', '.join(missed)} could not be reached in {where}")
    for line in lines:
        await services.registry.sweeps.note_escalation(record, services.registry.now(), detail=line)
    if missed:
        log.warning("escalation_unreached", card_id=record.card_id, owners=missed)


def _installation(placement: Placement) -> str:
    return placement.team if isinstance(placement, SlackPlacement) else placement.tenant or ""


async def _each_platform(
    record: CardRecord,
    card: Card,
    mounted: Mapping[str, Shows],
    work: Callable[[Adapter], Awaitable[None]],
) -> None:
    """Runs ``work`` once per platform the card has copies on (an item of a batch: the
    batch's), then refreshes per-person views of ``record``."""
    seen: set[str] = set()
    for placement in card.placements:
        shows = mounted.get(placement.platform)
        if shows is None or placement.platform in seen:
            continue
        seen.add(placement.platform)
        await shows.with_adapter(placement, work)
        await shows.cards_changed(record)
