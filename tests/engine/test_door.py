"""The registry is the bot's one door: what it asks of cards besides deciding them, answered there."""

from __future__ import annotations

from datetime import timedelta

from tests.engine.conftest import ARJUN, EVERYTHING, PRIYA, RAVI, SteppedClock
from tools import Caller, CardStatus, CardStore, Issuee, Proposal, Registry
from tools.audit.log import AuditLog, Outcome
from tools.db import Database

RENAME = {"branch_id": 1, "name": "Indiranagar"}


async def _card(registry: Registry, caller: Caller = ARJUN) -> Proposal:
    result = await registry.call(EVERYTHING, "rename_branch", RENAME, caller)
    assert result.proposal is not None
    return result.proposal


async def _trail(db: Database, card_id: str) -> list[tuple[Outcome, str]]:
    return [(row.outcome, row.detail) for row in await AuditLog(db).recent(card_id=card_id)]


async def test_a_persons_cards_are_read_by_who_decides_and_who_asked(
    registry: Registry,
) -> None:
    """Ravi's rename goes to a manager: it waits on Arjun's decision, and Ravi sees it as asked."""
    card = await _card(registry, RAVI)
    assert [c.card_id for c in await registry.asked_by(RAVI)] == [card.card_id]
    assert await registry.pending_for(RAVI) == []
    assert card.card_id in [c.card_id for c in await registry.pending_for(ARJUN)]
    assert await registry.asked_by(ARJUN) == []


async def test_expiry_moves_each_card_once_with_its_audit_line(
    db: Database, registry: Registry, clock: SteppedClock
) -> None:
    """Past its time a card is expired by the first sweep, at the registry's clock, audited;
    a second sweep moves nothing."""
    card = await _card(registry)
    clock.step(timedelta(minutes=31))
    assert registry.now() == clock.now
    expired = await registry.sweeps.expire_due(registry.now())
    assert [(c.card_id, c.status) for c in expired] == [(card.card_id, CardStatus.EXPIRED)]
    assert await registry.sweeps.expire_due(registry.now()) == []
    assert (Outcome.EXPIRED, "time ran out") in await _trail(db, card.card_id)


async def test_escalation_issues_the_owners_once_with_its_audit_line(
    db: Database, registry: Registry
) -> None:
    """Ravi's routed card is sent to Priya, the owner, once: a second escalation matches nothing."""
    card = await _card(registry, RAVI)
    owners = await registry.sweeps.owners(RAVI.tenantid)
    assert owners == [Issuee(PRIYA.userid, "Priya Raman")]
    due = await registry.sweeps.escalation_due(
        registry.now() + timedelta(seconds=1), registry.now()
    )
    assert [c.card_id for c in due] == [card.card_id]
    issued = [*due[0].issued_to, *owners]
    now = registry.now()
    record = await registry.sweeps.escalate(card.card_id, issued, now, detail="sent to Priya Raman")
    assert record is not None and PRIYA.userid in [i.userid for i in record.issued_to]
    assert await registry.sweeps.escalate(card.card_id, issued, now, detail="again") is None
    assert (Outcome.ESCALATED, "sent to Priya Raman") in await _trail(db, card.card_id)


async def test_a_decisions_showing_is_taken_and_marked_shown_once(
    registry: Registry, db: Database
) -> None:
    """After an approval this process takes the card's showing; once marked shown, nobody
    takes it again and no sweep lists it."""
    card = await _card(registry)
    assert (await registry.approve(EVERYTHING, card.card, ARJUN)).ok
    taken = await registry.showing.take(card.card_id)
    assert taken is not None and taken.card_id == card.card_id
    await CardStore(db).mark_shown(card.card_id, registry.now())
    assert await registry.showing.take(card.card_id) is None
    assert await registry.showing.unshown(registry.now()) == []
    stored = await registry.card(card.card_id)
    assert stored is not None and stored.shown_at == registry.now()


async def test_a_cards_copies_are_recorded_and_changed_under_its_lock(
    registry: Registry, db: Database
) -> None:
    """Where a card was posted is stored, and a change sees what is stored at that moment."""
    card = await _card(registry)
    await CardStore(db).attach_posting(card.card_id, {"copies": ["first"]})
    seen: list[object] = []

    def add(services: dict[str, object] | None) -> dict[str, object]:
        seen.append(services)
        return {"copies": ["first", "second"]}

    changed = await registry.change_posting(card.card_id, add)
    assert seen == [{"copies": ["first"]}]
    assert changed is not None and changed.posting == {"copies": ["first", "second"]}
