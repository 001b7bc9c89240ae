"""Decides a batch with one press: each of its cards through the single-card path; never runs one itself.

The batch's token is verified once (signature, time, merchant, and the digest of its cards);
then each card still waiting goes through exactly what a press on that card alone would go
through (``tools.approving.approval.approve_verified``, ``tools.approving.decline.end_verified``): its own checks,
its own claim with its "approved / executing" line committed before the write, its own write
with the live re-check, in its own transactions. A card that can no longer run (approved
meanwhile, its branch closed) fails alone and the others still run; two presses at once run
each card once, because each card's claim is its own conditional UPDATE.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from tools.agent import Agent
from tools.approving.approval import approve_verified
from tools.approving.checks import tool_of
from tools.approving.decline import end_verified
from tools.approving.trail import Trail, lost_claim
from tools.audit.log import Outcome
from tools.batches import grouping as batching
from tools.batches.grouping import BATCH_TOOL, BatchRecord
from tools.caller import Caller
from tools.cards.record import CardRecord, CardStatus
from tools.cards.tokens import CardClaims
from tools.deps import Deps
from tools.errors import (
    CardExpiredError,
    CountersignError,
    InvalidCardError,
    NotTheAskerError,
    NotYourCardError,
)

__all__ = ["BatchDecision", "ItemOutcome", "approve_batch", "reject_batch", "withdraw_batch"]

log = structlog.get_logger("tools.batches.deciding")


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """What this press did to one card of the batch: the card as it now stands, and the
    refusal or failure that stopped it (None when it moved as asked)."""

    card: CardRecord
    error: CountersignError | None = None
    moved: bool = True


@dataclass(frozen=True, slots=True)
class BatchDecision:
    """The batch as it stands after a press, and what the press did to each card it tried."""

    batch: BatchRecord
    items: tuple[ItemOutcome, ...]

    @property
    def moved(self) -> bool:
        """Whether this press changed any card (else another press had decided them all)."""
        return any(item.moved for item in self.items)

    @property
    def refusal(self) -> CountersignError | None:
        """Why nothing moved, for the presser: the first card's refusal."""
        return next((i.error for i in self.items if i.error is not None), None)


async def approve_batch(deps: Deps, agent: Agent, token: str, caller: Caller) -> BatchDecision:
    """Approves every card of the batch still waiting, each once, each on its own."""
    batch = await _verified(deps, agent, token, caller, asker_only=False)
    items = [await _approve(deps, agent, card, caller) for card in batch.live]
    return await _decided(deps, batch, items)


async def reject_batch(
    deps: Deps, agent: Agent, token: str, caller: Caller, reason: str = ""
) -> BatchDecision:
    """Declines every card of the batch still waiting, with one reason."""
    reason = reason.strip()[:500]
    batch = await _verified(deps, agent, token, caller, asker_only=False)
    audited = (Outcome.REJECTED, reason or "no reason given")
    items = [
        await _end(deps, agent, card, caller, CardStatus.REJECTED, audited, reason or None)
        for card in batch.live
    ]
    return await _decided(deps, batch, items)


async def withdraw_batch(deps: Deps, agent: Agent, token: str, caller: Caller) -> BatchDecision:
    """Takes back every card of the batch still waiting; only its asker may."""
    batch = await _verified(deps, agent, token, caller, asker_only=True)
    audited = (Outcome.WITHDRAWN, "withdrawn by the person who asked")
    items = [
        await _end(deps, agent, card, caller, CardStatus.WITHDRAWN, audited) for card in batch.live
    ]
    return await _decided(deps, batch, items)


async def _verified(
    deps: Deps, agent: Agent, token: str, caller: Caller, *, asker_only: bool
) -> BatchRecord:
    """The batch a token names, once its signature, merchant, cards and presser check out.

    A batch whose time ran out has its waiting cards moved to expired (each with its line).
    """
    trail = Trail(deps, agent, caller)
    trail.entry.tool = BATCH_TOOL
    try:
        claims, expired = deps.signer.parse_batch(token)
    except InvalidCardError as invalid:
        raise await trail.refuse(invalid) from None
    trail.entry.card_id = claims.batch_id
    if claims.tenantid != caller.tenantid:
        raise await trail.refuse(NotYourCardError(card_id=None, owner_userid=claims.userid))
    batch = await batching.load(deps, claims.batch_id)
    if (
        batch is None
        or (batch.userid, batch.tenantid, batch.digest)
        != (claims.userid, claims.tenantid, claims.digest)
        or batching.batch_digest([c.card_id for c in batch.items], batch.items) != claims.digest
    ):
        raise await trail.refuse(InvalidCardError("no such card was issued"))
    first = batch.items[0].card_id
    if expired:
        await _expire(deps, agent, caller, batch)
        raise CardExpiredError(card_id=first)
    if not batch.live:
        async with deps.db.begin() as conn:
            raise await trail.refuse(await lost_claim(deps, conn, first))
    if asker_only and (batch.userid, batch.tenantid) != (caller.userid, caller.tenantid):
        raise await trail.refuse(NotTheAskerError(card_id=first))
    if not asker_only and not batch.live[0].issued_to_person(caller.userid, caller.tenantid):
        raise await trail.refuse(NotYourCardError(card_id=first, owner_userid=batch.userid))
    return batch


async def _expire(deps: Deps, agent: Agent, caller: Caller, batch: BatchRecord) -> None:
    for card in batch.live:
        trail = _trail(deps, agent, caller, card)
        async with deps.db.begin() as conn:
            if await deps.cards.move(
                card.card_id, frm=CardStatus.PENDING, to=CardStatus.EXPIRED, conn=conn
            ):
                await trail.add(conn, Outcome.EXPIRED, str(CardExpiredError()))


def _trail(deps: Deps, agent: Agent, caller: Caller, card: CardRecord) -> Trail:
    trail = Trail(deps, agent, caller)
    trail.entry.tool, trail.entry.card_id = card.tool, card.card_id
    return trail


def _claims(card: CardRecord) -> CardClaims:
    """A card's claims as the batch's verified token vouches for them (its digest included)."""
    return CardClaims(card.card_id, card.tool, card.userid, card.tenantid, card.digest)


async def _approve(deps: Deps, agent: Agent, card: CardRecord, caller: Caller) -> ItemOutcome:
    trail = Trail(deps, agent, caller)
    claims = _claims(card)
    try:
        tool = await tool_of(deps, trail, claims)
        decision = await approve_verified(
            deps, trail, agent=agent, claims=claims, tool=tool, caller=caller
        )
    except CountersignError as refused:
        return await _unmoved(deps, card, refused)
    except Exception:  # one card's broken write must not stop the others
        # The engine has moved the card to failed with its audit line already; the others
        # still run, and the card shows the failure like any other.
        log.exception("batch_item_failed", card_id=card.card_id)
        return await _unmoved(deps, card, None, moved=True)
    return ItemOutcome(decision.card, decision.error)


async def _end(  # noqa: PLR0917 - the batch's three verbs differ only in these
    deps: Deps,
    agent: Agent,
    card: CardRecord,
    caller: Caller,
    to: CardStatus,
    audited: tuple[Outcome, str],
    reason: str | None = None,
) -> ItemOutcome:
    trail = Trail(deps, agent, caller)
    claims = _claims(card)
    try:
        tool = await tool_of(deps, trail, claims)
        decision = await end_verified(
            deps,
            trail,
            claims=claims,
            tool=tool,
            caller=caller,
            to=to,
            audited=audited,
            reason=reason,
        )
    except CountersignError as refused:
        return await _unmoved(deps, card, refused)
    return ItemOutcome(decision.card)


async def _unmoved(
    deps: Deps, card: CardRecord, error: CountersignError | None, *, moved: bool = False
) -> ItemOutcome:
    current = await deps.cards.get(card.card_id)
    return ItemOutcome(current or card, error, moved=moved)


async def _decided(deps: Deps, batch: BatchRecord, items: list[ItemOutcome]) -> BatchDecision:
    fresh = await batching.load(deps, batch.batch_id)
    return BatchDecision(fresh or batch, tuple(items))
