"""What a card is to the core, one write or several, loaded whole; never decides, words or shows one.

A card holds one or several items (writes). A single card is a card of one item, its stored
record; a card of several is a batch (``tools.batches.grouping``): one Approve for all of them, its
copies stored with the batch rather than with its items. Whether a card is one or several is
decided here and nowhere else: where a record or an id comes in (``of_record``, ``load``),
and where a press's signed token goes to the engine (``decide``). Everything after that reads
the ``Card``: its items, its copies, its spec.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from bot.cards import cardspec, several, wording
from bot.cards.cardspec import CardSpec, Verdict
from bot.placement import (
    ListPlacement,
    Placement,
    first_copy,
    lists_of_stored,
    placements_of_stored,
)
from tools import (
    Agent,
    Batch,
    BatchRecord,
    Caller,
    CardRecord,
    CardStatus,
    Proposal,
    Registry,
    Routing,
    is_batch_token,
)
from tools.errors import CountersignError

__all__ = [
    "Card",
    "Decided",
    "Fresh",
    "attach",
    "change_posting",
    "decide",
    "each_once",
    "fresh_one",
    "fresh_several",
    "load",
    "of_record",
    "one",
]

_OPEN = frozenset({CardStatus.PENDING, CardStatus.EXECUTING})


@dataclass(frozen=True, slots=True)
class Card:
    """A card as it stands: its items in the order they were proposed, and where it is shown.

    ``card_id`` is the item's id for a card of one, the batch's for a card of several (what
    its buttons and copies name).
    """

    card_id: str
    items: tuple[CardRecord, ...]
    posting: dict[str, Any] | None
    expires_at: datetime
    created_at: datetime
    several: bool = False

    @property
    def placements(self) -> tuple[Placement, ...]:
        """Every copy of the card this build can show, in the order they were posted."""
        return placements_of_stored(self.posting)

    @property
    def lists(self) -> tuple[ListPlacement, ...]:
        """The private lists of a person's cards that showed this one (``bot.presses.listed``)."""
        return lists_of_stored(self.posting)

    @property
    def single(self) -> CardRecord | None:
        """The card's one item, or None for a card of several."""
        return None if self.several else self.items[0]

    @property
    def live(self) -> tuple[CardRecord, ...]:
        """The items still waiting for a decision."""
        return tuple(c for c in self.items if c.status is CardStatus.PENDING)

    @property
    def lead(self) -> CardRecord:
        """The item whose people and approvals the card shows: the first still waiting (a
        press decides them all), else the first."""
        return next(iter(self.live), self.items[0])

    @property
    def open(self) -> bool:
        """Whether any item still waits or is mid-write: nothing to show as decided."""
        return any(c.status in _OPEN for c in self.items)

    @property
    def running(self) -> bool:
        """Whether an item is mid-write (the press running it shows the card when done)."""
        return any(c.status is CardStatus.EXECUTING for c in self.items)

    @property
    def shown(self) -> bool:
        """Whether its decision went out (every copy updated, the audit line posted)."""
        return all(c.shown_at is not None for c in self.items)

    @property
    def looks(self) -> tuple[tuple[object, ...], ...]:
        """What its copies show of it: two states that look alike are drawn alike (where it
        is shown, and whether its decision was recorded shown, aside)."""
        return tuple(
            (c.status, c.approvals, c.issued_to, c.args, c.details, c.expires_at, c.outcome)
            for c in self.items
        )

    @property
    def userid(self) -> int:
        """Who asked for it."""
        return self.items[0].userid

    @property
    def tenantid(self) -> int:
        return self.items[0].tenantid

    def once(self, what: str) -> str:
        """The receipt key that lets one process, once, do ``what`` for this card."""
        return f"{'batch' if self.several else 'card'}:{what}:{self.card_id}"

    def spec(
        self,
        *,
        token: str = "",
        now: datetime | None = None,
        issued_to: str | None = None,
    ) -> CardSpec:
        """The card as a surface draws it: with buttons when given the copy's token; with
        ``now``, a waiting item past its time shows as expired."""
        if self.several:
            drawn = several.spec(
                self.card_id,
                self.items,
                expires_at=self.expires_at,
                created_at=self.created_at,
                token=token,
                now=now,
            )
        else:
            drawn = cardspec.of_record(self.items[0], token=token, issued_to=issued_to, now=now)
        return replace(drawn, reason_hint=wording.reason_hint(self.reason_seen_by))

    @property
    def reason_seen_by(self) -> wording.SeenBy:
        """Who reads a reason given to Reject: an agent at /mcp that asked; else the channel
        it was asked in, or its asker where that was a DM or 1:1 chat (no channel)."""
        if wording.outside_agent(self.lead.agent):
            return "agent"
        asked = next((p for p in self.placements if p.conversation), None)
        return "asker" if asked is not None and asked.one_to_one else "channel"


@dataclass(frozen=True, slots=True)
class Fresh:
    """A card just proposed, as a surface posts it: its one proposal, or its items together.

    ``card`` is set for a card of several (as stored when grouped); a card of one is drawn
    from its ``proposal``, which the registry returned with the signed token.
    """

    card_id: str
    token: str
    routing: Routing | None
    proposal: Proposal | None = None
    card: Card | None = None
    # The cards it replaced (the same target, another write): shown replaced once it is out.
    replaced: tuple[str, ...] = ()
    # The agent that asked for it, when it is not Countersign's own chat (``bot.mcp``).
    agent: str = ""

    def spec(self, *, issued_to: str | None = None) -> CardSpec:
        """The fresh card as drawn for everyone where it was asked."""
        if self.card is not None:
            return self.card.spec(token=self.token)
        assert self.proposal is not None, "a fresh card is one proposal or several items"
        return cardspec.of_proposal(self.proposal, issued_to=issued_to, agent=self.agent)

    @property
    def editable(self) -> tuple[str, ...]:
        """The values a person may change before approving (none on a card of several)."""
        return self.proposal.editable if self.proposal is not None else ()


def fresh_one(proposal: Proposal) -> Fresh:
    """A card of one write, just proposed."""
    return Fresh(
        proposal.card_id,
        proposal.card,
        proposal.routing,
        proposal=proposal,
        replaced=tuple(proposal.replaced),
    )


def fresh_several(batch: Batch, proposals: Sequence[Proposal]) -> Fresh:
    """A card of several writes, just grouped (``tools.batches.grouping.bundle``)."""
    return Fresh(
        batch.record.batch_id,
        batch.token,
        batch.routing,
        card=_of_batch(batch.record),
        replaced=tuple(r for p in proposals for r in p.replaced),
    )


async def attach(registry: Registry, fresh: Fresh, placement: Placement) -> Card | None:
    """Records where a fresh card was posted, so whichever process decides it can update it;
    the card as it then stands (decided already, when pressed as soon as it was posted).

    It is recorded as the card's first copy, keeping any recorded before it, under the row's
    lock: written over them, a copy recorded meanwhile was lost, and put after them the audit
    line, posted with the first copy, went to a DM.
    """

    if fresh.card is not None:
        batch = await registry.batches.change_posting(fresh.card_id, first_copy(placement))
        return _of_batch(batch) if batch is not None and batch.items else None
    record = await registry.change_posting(fresh.card_id, first_copy(placement))
    return one(record) if record is not None else None


def one(record: CardRecord) -> Card:
    """A card of one item, as its record stands."""
    return Card(
        card_id=record.card_id,
        items=(record,),
        posting=record.posting,
        expires_at=record.expires_at,
        created_at=record.created_at,
    )


def _of_batch(batch: BatchRecord) -> Card:
    return Card(
        card_id=batch.batch_id,
        items=batch.items,
        posting=batch.posting,
        expires_at=batch.expires_at,
        created_at=batch.created_at,
        several=True,
    )


async def of_record(registry: Registry, record: CardRecord) -> Card:
    """The card a stored item is shown as: itself, or the batch it is in.

    An item of a batch has no message of its own; without this the expiry sweep and the
    reconciler found nowhere to show it, and the batch kept live buttons.
    """
    if record.batch_id is None:
        return one(record)
    batch = await registry.batches.get(record.batch_id)
    return _of_batch(batch) if batch is not None and batch.items else one(record)


async def load(registry: Registry, card_id: str | None) -> Card | None:
    """The card an id names as it stands now (an item's id or a batch's), or None."""
    if not card_id:
        return None
    record = await registry.card(card_id)
    if record is not None:
        return await of_record(registry, record)
    batch = await registry.batches.get(card_id)
    return _of_batch(batch) if batch is not None and batch.items else None


async def change_posting(
    registry: Registry, card: Card, change: Callable[[dict[str, Any] | None], dict[str, Any]]
) -> Card | None:
    """Rewrites where the card's copies are under its row's lock; the card as it then stands."""
    if card.several:
        batch = await registry.batches.change_posting(card.card_id, change)
        return _of_batch(batch) if batch is not None else None
    record = await registry.change_posting(card.card_id, change)
    return one(record) if record is not None else None


async def each_once(registry: Registry, records: Sequence[CardRecord]) -> list[Card]:
    """The cards these items are shown as, in order, each batch once (where its first item
    was): a list that showed a batch's items one by one showed writes nobody could press."""
    found: list[Card] = []
    seen: set[str] = set()
    for record in records:
        card = await of_record(registry, record)
        if card.card_id not in seen:
            seen.add(card.card_id)
            found.append(card)
    return found


@dataclass(frozen=True, slots=True)
class Decided:
    """What a press did: the card as it now stands, whether it moved any item, and why not
    (when another press had decided every item first)."""

    card: Card
    moved: bool = True
    refusal: CountersignError | None = None


async def decide(  # noqa: PLR0917 - a press is these things
    registry: Registry, agent: Agent, token: str, caller: Caller, verb: Verdict, reason: str = ""
) -> Decided:
    """Sends a press to the engine, which verifies its token and decides; the token says
    whether it names one card or a batch (each item then decided as alone)."""
    if is_batch_token(token):
        if verb == "approve":
            batch = await registry.batches.approve(agent, token, caller)
        elif verb == "withdraw":
            batch = await registry.batches.withdraw(agent, token, caller)
        else:
            batch = await registry.batches.reject(agent, token, caller, reason)
        return Decided(_of_batch(batch.batch), batch.moved, batch.refusal)
    if verb == "approve":
        decision = await registry.approve(agent, token, caller)
    elif verb == "withdraw":
        decision = await registry.withdraw(agent, token, caller)
    else:
        decision = await registry.reject(agent, token, caller, reason)
    return Decided(one(decision.card))
