"""What the bot asks of cards besides deciding them; ``Registry`` is one, and never runs a write.

Reading a person's cards, where a card's copies are, who shows a decision, the sweeps that move
cards on without a press, and batches. Each is a thin step over ``tools.deps``, so the bot
never reaches past the registry into the card store, the audit log, the clock or the lease.
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
from tools.cards.tokens import is_batch_token
from tools.deps import EngineDeps
from tools.errors import CardExpiredError, InvalidCardError
from tools.keeping import showing, sweeping
from tools.keeping.reconcile import reconcile
from tools.people.policy import Policies, Policy
from tools.tool import Routing

__all__ = ["CardDoor", "Covers", "PostingChange"]

# Whether the copies a stored ``posting`` value names were all shown (``tools.keeping.showing.record``).
Covers = showing.Covers
# Where a card's (or batch's) copies are, from what is stored at that moment.
PostingChange = Callable[[dict[str, Any] | None], dict[str, Any]]


class CardDoor:
    """The card-keeping half of the registry's door; the registry builds ``_deps``."""

    _deps: EngineDeps

    def now(self) -> datetime:
        """The registry's clock: the time cards are made, decided and swept by."""
        return self._deps.clock()

    async def pending_for(self, caller: Caller) -> list[CardRecord]:
        """The live cards waiting on this person's decision, oldest first."""
        return await self._deps.cards.pending_for(caller.userid, caller.tenantid, self.now())

    async def asked_by(self, caller: Caller) -> list[CardRecord]:
        """The live cards this person asked for that wait on somebody else, oldest first."""
        return await self._deps.cards.asked_by(caller.userid, caller.tenantid, self.now())

    async def attach_posting(self, card_id: str, posting: dict[str, Any]) -> None:
        """Records where a surface posted the card, so whichever process decides it can update it."""
        await self._deps.cards.attach_posting(card_id, posting)

    async def change_posting(self, card_id: str, change: PostingChange) -> CardRecord | None:
        """Rewrites where a card's copies are under the row's lock; the card as it then stands."""
        return await self._deps.cards.change_posting(card_id, change)

    async def take_showing(self, card_id: str) -> CardRecord | None:
        """Takes the showing of a decided card for this process; see ``tools.keeping.showing.take``."""
        return await showing.take(self._deps, card_id, now=self.now())

    async def unshown(self, now: datetime) -> list[CardRecord]:
        """Decided cards never shown whose showing no live process answers for."""
        return await showing.unshown(self._deps, now=now)

    async def take_over_showing(self, card: CardRecord, now: datetime) -> bool:
        """Takes an unshown card's showing for this process; False: another took it first."""
        return await showing.take_over(self._deps, card, now=now)

    async def give_back_showing(self, card_id: str) -> None:
        """Gives up the showing of a decision found with no copy; see ``tools.keeping.showing.give_back``."""
        await showing.give_back(self._deps, card_id)

    async def record_shown(
        self, card_ids: Sequence[str], *, batch_id: str | None, covers: Covers
    ) -> bool:
        """Records a decision shown if its stored copies are the ones shown; see
        ``tools.keeping.showing.record``."""
        return await showing.record(
            self._deps, card_ids, batch_id=batch_id, covers=covers, now=self.now()
        )

    async def mark_shown(self, card_id: str) -> None:
        """Records that a card's decision went out: every copy updated, the audit line posted."""
        await self._deps.cards.mark_shown(card_id, self.now())

    def card_id_of(self, token: str) -> str | None:
        """The card (or card of several) a token's signature vouches for, its time run out or
        not; None when the signature does not hold.

        A press names its card by this, never by what a surface drew beside the button: a block
        id or a modal's metadata only helps find where a message is.
        """
        signer = self._deps.signer
        try:
            if is_batch_token(token):
                return signer.parse_batch(token)[0].batch_id
            return signer.parse(token).card_id
        except CardExpiredError as expired:
            return expired.card_id
        except InvalidCardError:
            return None

    def working_on(self, card_id: str) -> AbstractContextManager[None]:
        """While inside, this process answers for the card: no sweep elsewhere takes it over."""
        return self._deps.lease.executing(card_id)

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

    async def policy(self, tenantid: int) -> Policy:
        """The merchant's approval policy as stored now."""
        return await Policies(self._deps.db).get(tenantid)

    # A batch: several cards of one turn behind one Approve (``tools.batches.grouping``).

    async def bundle(self, caller: Caller, card_ids: Sequence[str]) -> Batch:
        """Groups the asker's live cards of one turn into one batch with one signed token."""
        return await batching.bundle(self._deps, caller, card_ids)

    async def batch_routing(self, caller: Caller, card_ids: Sequence[str]) -> Routing | None:
        """Who the one card of these cards would wait for (see ``bundle``); None if none."""
        return await batching.routing_of(self._deps, caller, card_ids)

    async def batch(self, batch_id: str) -> BatchRecord | None:
        """The batch and its cards as they stand now, or None."""
        return await batching.load(self._deps, batch_id)

    async def change_batch_posting(
        self, batch_id: str, change: PostingChange
    ) -> BatchRecord | None:
        """Rewrites where a batch's copies are under the row's lock; the batch as it then stands."""
        return await batching.change_posting(self._deps, batch_id, change)

    async def approve_batch(self, agent: Agent, token: str, caller: Caller) -> BatchDecision:
        """Runs each live card of a batch as its own approval; see ``tools.batches.deciding``."""
        return await batch_approval.approve_batch(self._deps, agent, token, caller)

    async def reject_batch(
        self, agent: Agent, token: str, caller: Caller, reason: str = ""
    ) -> BatchDecision:
        """Declines each live card of a batch; see ``tools.batches.deciding``."""
        return await batch_approval.reject_batch(self._deps, agent, token, caller, reason)

    async def withdraw_batch(self, agent: Agent, token: str, caller: Caller) -> BatchDecision:
        """Takes back each live card of a batch its asker no longer wants."""
        return await batch_approval.withdraw_batch(self._deps, agent, token, caller)
