"""What the bot asks of cards besides proposing and deciding one; never runs a write.

Three small doors the registry hands the bot, each a thin step over ``tools.deps``: ``Showing``
(who shows a decision, and that it was shown), ``Sweeps`` (what moves cards on without a press)
and ``Batches`` (several cards of one turn behind one Approve). Through them the bot never
reaches the card store, the audit log, the clock, the signer or the lease.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from tools.agent import Agent
from tools.batches import deciding as batch_approval
from tools.batches import grouping as batching
from tools.batches.deciding import BatchDecision
from tools.batches.grouping import Batch, BatchRecord
from tools.caller import Caller
from tools.cards.record import CardRecord, Issuee
from tools.cards.tokens import BatchClaims, CardClaims
from tools.deps import EngineDeps
from tools.keeping import showing, sweeping
from tools.keeping.reconcile import reconcile
from tools.tool import Routing

__all__ = ["Batches", "Covers", "PostingChange", "Showing", "Sweeps"]

# Whether the copies a stored ``posting`` value names were all shown (``tools.keeping.showing.record``).
Covers = showing.Covers
# Where a card's (or batch's) copies are, from what is stored at that moment.
PostingChange = Callable[[dict[str, Any] | None], dict[str, Any]]


class Showing:
    """Who shows a decided card, and the record that it went out (``tools.keeping.showing``)."""

    def __init__(self, deps: EngineDeps) -> None:
        self._deps = deps

    def token_of(self, card: CardRecord) -> str:
        """The card's token signed anew from the stored card: the same claims, so it verifies as
        the one first minted (for posting a card whose first post never went out)."""
        claims = CardClaims(card.card_id, card.tool, card.userid, card.tenantid, card.digest)
        return self._deps.signer.mint(claims)

    def batch_token_of(self, batch: BatchRecord) -> str:
        """A batch's token signed anew from the stored batch, as ``token_of`` for one card."""
        claims = BatchClaims(batch.batch_id, batch.userid, batch.tenantid, batch.digest)
        return self._deps.signer.mint_batch(claims)

    async def take(self, card_id: str) -> CardRecord | None:
        """Takes the showing of a decided card for this process; see ``tools.keeping.showing.take``."""
        return await showing.take(self._deps, card_id, now=self._deps.clock())

    async def unshown(self, now: datetime) -> list[CardRecord]:
        """Decided cards never shown whose showing no live process answers for."""
        return await showing.unshown(self._deps, now=now)

    async def take_over(self, card: CardRecord, now: datetime) -> bool:
        """Takes an unshown card's showing for this process; False: another took it first."""
        return await showing.take_over(self._deps, card, now=now)

    async def give_back(self, card_id: str) -> None:
        """Gives up the showing of a decision found with no copy; see ``tools.keeping.showing.give_back``."""
        await showing.give_back(self._deps, card_id)

    async def record(
        self, card_ids: Sequence[str], *, batch_id: str | None, covers: Covers
    ) -> bool:
        """Records a decision shown if its stored copies are the ones shown; see
        ``tools.keeping.showing.record``."""
        return await showing.record(
            self._deps, card_ids, batch_id=batch_id, covers=covers, now=self._deps.clock()
        )

    def working_on(self, card_id: str) -> AbstractContextManager[None]:
        """While inside, this process answers for the card: no sweep elsewhere takes it over."""
        return self._deps.lease.executing(card_id)


class Sweeps:
    """What moves cards on without a press: settling, expiry and escalation."""

    def __init__(self, deps: EngineDeps) -> None:
        self._deps = deps

    async def reconcile(self, *, now: datetime | None = None) -> list[CardRecord]:
        """Settles cards a gone process left executing; see ``tools.keeping.reconcile``."""
        return await reconcile(self._deps, now=now)

    async def expire_due(self, now: datetime) -> list[CardRecord]:
        """Expires the live cards whose time ran out, each audited; the ones this call moved."""
        return await sweeping.expire_due(self._deps, now)

    async def escalation_due(self, before: datetime, now: datetime) -> list[CardRecord]:
        """Live cards made before ``before`` that wait on others and were not escalated yet."""
        return await self._deps.cards.escalation_due(before, now)

    async def escalate(
        self, card_id: str, issued_to: Sequence[Issuee], now: datetime, *, detail: str
    ) -> CardRecord | None:
        """Issues a live card to ``issued_to`` once, audited; see ``tools.keeping.sweeping.escalate``."""
        return await sweeping.escalate(self._deps, card_id, issued_to, now, detail=detail)

    async def note_escalation(self, card: CardRecord, now: datetime, *, detail: str) -> None:
        """Audits what became of an escalation's copies (who was told, who not)."""
        await sweeping.note_escalation(self._deps, card, now, detail=detail)

    async def owners(self, tenantid: int) -> list[Issuee]:
        """The merchant's owners: whom a card nobody decided is escalated to."""
        return await sweeping.owners(self._deps, tenantid)


class Batches:
    """Several cards of one turn behind one Approve (``tools.batches``)."""

    def __init__(self, deps: EngineDeps) -> None:
        self._deps = deps

    async def bundle(self, caller: Caller, card_ids: Sequence[str]) -> Batch:
        """Groups the asker's live cards of one turn into one batch with one signed token."""
        return await batching.bundle(self._deps, caller, card_ids)

    async def routing(self, caller: Caller, card_ids: Sequence[str]) -> Routing | None:
        """Who the one card of these cards would wait for (see ``bundle``); None if none."""
        return await batching.routing_of(self._deps, caller, card_ids)

    async def get(self, batch_id: str) -> BatchRecord | None:
        """The batch and its cards as they stand now, or None."""
        return await batching.load(self._deps, batch_id)

    async def change_posting(self, batch_id: str, change: PostingChange) -> BatchRecord | None:
        """Rewrites where a batch's copies are under the row's lock; the batch as it then stands."""
        return await batching.change_posting(self._deps, batch_id, change)

    async def approve(self, agent: Agent, token: str, caller: Caller) -> BatchDecision:
        """Runs each live card of a batch as its own approval; see ``tools.batches.deciding``."""
        return await batch_approval.approve_batch(self._deps, agent, token, caller)

    async def reject(
        self, agent: Agent, token: str, caller: Caller, reason: str = ""
    ) -> BatchDecision:
        """Declines each live card of a batch; see ``tools.batches.deciding``."""
        return await batch_approval.reject_batch(self._deps, agent, token, caller, reason)

    async def withdraw(self, agent: Agent, token: str, caller: Caller) -> BatchDecision:
        """Takes back each live card of a batch its asker no longer wants."""
        return await batch_approval.withdraw_batch(self._deps, agent, token, caller)
