"""Shows several writes of one turn as one card, and decides a press on it; never runs a write itself.

A turn whose model proposed two or more writes (offline: "approve requests 1, 2 and 3") gets
one card listing them all, with one Approve, instead of a card per write. The cards themselves
are made exactly as alone (``tools.proposing``); ``tools.batching`` groups them and mints the
one token the buttons carry, ``tools.batch_approval`` decides a press on it card by card.

More than ``MAX_ITEMS`` writes in one turn: the first twenty are one batch and each further
write keeps a card of its own. Refusing them instead would throw away proposals the model has
already been told are waiting (and that are audited as proposed); a card of their own keeps
every one of them decidable, and the model's words stay true.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy.exc import SQLAlchemyError

from bot import batchwords, receipts
from bot.batch_show import show_batch
from bot.copies import address
from bot.decisions import show_decision
from bot.placement import Placement, SlackPlacement, placements_of_stored, stored
from bot.surface import Surface
from tools import Caller, CardStatus, Proposal
from tools.batch_approval import BatchDecision, approve_batch, reject_batch, withdraw_batch
from tools.batching import MAX_ITEMS, Batch, BatchRecord, bundle, change_surface, load
from tools.card_record import Issuee
from tools.errors import CardExpiredError, ConflictError, CountersignError, NotYourCardError
from tools.tokens import is_batch_token

if TYPE_CHECKING:
    from bot.adapter import Adapter
    from bot.presses import Outcome, Press

__all__ = ["escalated", "is_batch_token", "ladder", "post_batch", "post_turn_cards"]

log = structlog.get_logger("bot.batches")


async def post_turn_cards(
    surface: Surface,
    adapter: Adapter,
    proposals: Sequence[Proposal],
    *,
    caller: Caller,
    conversation: str,
    installation: str,
) -> list[Proposal]:
    """Posts two or more proposals of one turn as one batch card; returns those left to post
    one by one (all of them when they could not be grouped)."""
    if len(proposals) < 2:
        return list(proposals)
    grouped, rest = list(proposals[:MAX_ITEMS]), list(proposals[MAX_ITEMS:])
    try:
        batch = await bundle(surface.registry, caller, [p.card_id for p in grouped])
    except ConflictError as refused:
        # A card decided or replaced within the same moment: each keeps its own card.
        log.info("batch_not_made", why=str(refused))
        return list(proposals)
    await post_batch(
        surface,
        adapter,
        batch,
        grouped,
        caller=caller,
        conversation=conversation,
        installation=installation,
    )
    return rest


async def post_batch(
    surface: Surface,
    adapter: Adapter,
    batch: Batch,
    proposals: Sequence[Proposal],
    *,
    caller: Caller,
    conversation: str,
    installation: str,
) -> None:
    """Posts the batch card, records where, shows what it replaced, and sends the copies."""
    placement = await adapter.post_batch(batch, caller=caller, conversation=conversation)
    await change_surface(surface.registry, batch.record.batch_id, lambda _: stored([placement]))
    log.info("batch_posted", batch_id=batch.record.batch_id, cards=len(batch.record.items))
    for proposal in proposals:
        for replaced in proposal.replaced:
            old = await surface.registry.card(replaced)
            if old is not None:
                await show_decision(surface, adapter, old)
    others = [i for i in batch.routing.issued_to if i.userid != caller.userid]
    if others:
        await _send_copies(
            surface, adapter, batch.record, others, token=batch.token, installation=installation
        )


async def escalated(
    surface: Surface, adapter: Adapter, batch_id: str, bosses: Sequence[Issuee]
) -> None:
    """Shows a batch's wider list of approvers and sends the owners their copy, once.

    Its cards are escalated one by one (each is a card); the owners get one copy of the batch,
    sent by whichever process claims that first.
    """
    batch = await show_batch(surface, adapter, batch_id)
    if batch is None or not bosses or not batch.live:
        return
    thread = next(
        (p for p in placements_of_stored(batch.surface) if p.platform == adapter.platform), None
    )
    if thread is None or not thread.token:
        return
    key = f"batch:escalated:{batch_id}"
    if not await receipts.claim(surface.registry.db, key, surface.registry.clock()):
        return
    installation = thread.team if isinstance(thread, SlackPlacement) else thread.tenant or ""
    await _send_copies(
        surface, adapter, batch, bosses, token=thread.token, installation=installation
    )


async def _send_copies(
    surface: Surface,
    adapter: Adapter,
    record: BatchRecord,
    people: Sequence[Issuee],
    *,
    token: str,
    installation: str,
) -> None:
    push = _push(record.items[0].issued_to, record.userid, len(record.items))
    sent: list[Placement] = []
    for person in people:
        user = await address(surface, adapter, person.userid, installation)
        if user is None:
            log.info("copy_unreachable", batch_id=record.batch_id, person=person.userid)
            continue
        placement = await adapter.send_batch_copy(record, user, token=token, push=push)
        if placement is not None:
            # Whose copy it is: once they gave a first of two approvals it offers them nothing.
            sent.append(placement.model_copy(update={"person": person.userid}))
    if not sent:
        return

    def add(where: dict[str, Any] | None) -> dict[str, Any]:
        return stored([*placements_of_stored(where), *sent])

    now = await change_surface(surface.registry, record.batch_id, add)
    if now is not None and not any(c.status is CardStatus.PENDING for c in now.items):
        await show_batch(surface, adapter, record.batch_id)  # decided while on their way


def _push(issued: Sequence[Issuee], asker: int, count: int) -> str:
    name = next((i.name for i in issued if i.userid == asker), "")
    return batchwords.copy_text(count, name)


async def ladder(surface: Surface, adapter: Adapter, press: Press, caller: Caller) -> Outcome:
    """Decides a press on a batch card and shows the result: the single card's ladder, per batch."""
    try:
        decision = await _engine(surface, press, caller)
    except NotYourCardError:
        await adapter.post_privately(
            adapter.words.not_your_card(await _owner(surface, adapter, press))
        )
        log.info("press_refused", why="not_your_card")
        return "refused"
    except CardExpiredError as expired:
        await _show(surface, adapter, expired.card_id)
        await adapter.post_privately(adapter.words.refused(str(expired)))
        log.info("press_refused", why="expired")
        return "refused"
    except CountersignError as refused:
        await adapter.post_privately(adapter.words.refused(str(refused)))
        log.info("press_refused", why=type(refused).__name__)
        return "refused"
    except (SQLAlchemyError, ConnectionError):
        raise  # told by ``bot.presses.decide``, as for a single card
    except Exception:  # logged in full; each card the engine moved is shown as it stands
        log.exception("press_failed")
        await adapter.post_privately(adapter.words.press_failed())
        return "failed"
    if not decision.moved:
        # Every card was decided by someone else first (a double tap, two approvers at once):
        # the presser is told privately; the press that decided them shows the card.
        refusal = decision.refusal
        if isinstance(refusal, CardExpiredError):  # its cards ran out of time unswept
            await show_batch(surface, adapter, decision.batch.batch_id)
        await adapter.post_privately(adapter.words.refused(str(refusal) if refusal else ""))
        log.info("press_refused", why=type(refusal).__name__)
        return "refused"
    if not any(c.status is CardStatus.EXECUTING for c in decision.batch.items):
        # A card still mid-write belongs to another press, which shows the batch when done.
        await show_batch(surface, adapter, decision.batch.batch_id)
    log.info("batch_decided", batch_id=decision.batch.batch_id, verb=press.verb)
    return "decided"


async def _owner(surface: Surface, adapter: Adapter, press: Press) -> str | None:
    """Whom the batch's copy here names as its owner (as a refused presser is told), if any."""
    batch = await load(surface.registry, press.card_id) if press.card_id else None
    placement = adapter.here(placements_of_stored(batch.surface if batch else None))
    return placement.owner if placement is not None else None


async def _engine(surface: Surface, press: Press, caller: Caller) -> BatchDecision:
    registry, agent = surface.registry, surface.agent
    if press.verb == "approve":
        return await approve_batch(registry, agent, press.token, caller)
    if press.verb == "withdraw":
        return await withdraw_batch(registry, agent, press.token, caller)
    return await reject_batch(registry, agent, press.token, caller, press.reason)


async def _show(surface: Surface, adapter: Adapter, card_id: str | None) -> None:
    record = await surface.registry.card(card_id) if card_id else None
    if record is not None and record.batch_id is not None:
        batch = await load(surface.registry, record.batch_id)
        if batch is not None:
            await show_batch(surface, adapter, batch.batch_id)
