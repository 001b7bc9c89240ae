"""Routing through the merchant's policy: who a card goes to, two approvers, one live card per
target, withdrawal, expiry and escalation, on both databases and under concurrent presses."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy import update as sa_update

from tests.merchant.writes_support import (
    ARJUN,
    MEERA,
    PRIYA,
    RAVI,
    approve,
    make_registry,
    propose,
    row,
    snapshot,
)
from tests.support.clock import SteppedClock
from tools.audit.log import Outcome
from tools.caller import Role
from tools.cards.record import CardStatus, Issuee
from tools.cards.store import CardStore
from tools.cards.tokens import CARD_TTL
from tools.db import AuditRow, Database, ProposalRow
from tools.errors import (
    AlreadyApprovedError,
    CardDecidedError,
    CardLiveError,
    NotTheAskerError,
    NotYourCardError,
    RoleRequiredError,
)
from tools.registry import Registry
from tools.tool import Proposal
from tools.toolsets.merchant import DEFAULT_AGENT
from tools.toolsets.merchant.models import BranchRequest, Person, Refund


async def _outcomes(db: Database, card_id: str) -> list[tuple[str, str]]:
    async with db.session() as session:
        rows = await session.scalars(
            select(AuditRow).where(AuditRow.card_id == card_id).order_by(AuditRow.id)
        )
        return [(r.outcome, r.detail) for r in rows]


async def test_a_staff_card_goes_to_the_managers_and_the_first_to_approve_decides(
    db: Database,
) -> None:
    """Ravi asks to approve request 1 (₹18,500): Arjun and Meera may approve, Ravi and Priya
    (before escalation) may not; Meera's approval runs it once, Arjun then hears who did."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 1}, RAVI)
    assert card.routing is not None
    assert [i.name for i in card.routing.issued_to] == ["Arjun Mehta", "Meera Iyer"]
    for outsider in (RAVI, PRIYA):
        with pytest.raises(NotYourCardError):
            await approve(registry, card, outsider)
    decision = await approve(registry, card, MEERA)
    assert decision.ok and decision.card.decided_by_name == "Meera Iyer"
    with pytest.raises(CardDecidedError, match="already approved by Meera Iyer"):
        await approve(registry, card, ARJUN)
    request = await row(db, BranchRequest, 1)
    assert (request.status, request.decided_by) == ("approved", MEERA.userid)


async def test_two_managers_pressing_at_once_run_it_once(db: Database) -> None:
    """Arjun and Meera approve Ravi's routed card at the same moment: one write, one loser."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 1}, RAVI)
    results = await asyncio.gather(
        approve(registry, card, ARJUN), approve(registry, card, MEERA), return_exceptions=True
    )
    done = [r for r in results if not isinstance(r, BaseException) and r.ok]
    lost = [r for r in results if isinstance(r, CardDecidedError)]
    assert (len(done), len(lost)) == (1, 1), results
    outcomes = [o for o, _ in await _outcomes(db, card.card_id)]
    assert outcomes.count(Outcome.DONE) == 1


async def test_two_approvers_above_the_amount(db: Database) -> None:
    """Request 5 (₹42,000) needs two: Arjun's approval is recorded and audited, the request is
    still pending, his second press does not count; Meera's runs it once, naming both."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 5}, ARJUN)
    assert card.routing is not None and card.routing.approvals == 2
    before = await snapshot(db)
    first = await approve(registry, card, ARJUN)
    assert first.partly and [a.name for a in first.card.approvals] == ["Arjun Mehta"]
    assert await snapshot(db) == before
    assert (await row(db, BranchRequest, 5)).status == "pending"
    with pytest.raises(AlreadyApprovedError):
        await approve(registry, card, ARJUN)
    second = await approve(registry, card, MEERA)
    assert second.ok
    assert second.card.decided_by_name == "Arjun Mehta and Meera Iyer"
    # The write's own words name both too, not only the second who happened to run it.
    assert second.card.outcome == "Request 5 was approved by Arjun Mehta and Meera Iyer."
    assert (await row(db, BranchRequest, 5)).status == "approved"
    trail = await _outcomes(db, card.card_id)
    assert (Outcome.APPROVED, "approval 1 of 2") in trail
    assert [o for o, _ in trail].count(Outcome.DONE) == 1


async def test_first_and_second_approval_racing_run_it_once(db: Database) -> None:
    """Arjun and Meera both press first on request 5: both approvals count, once each, and
    the write runs exactly once whichever lands second."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 5}, ARJUN)
    results = await asyncio.gather(approve(registry, card, ARJUN), approve(registry, card, MEERA))
    assert sorted(r.card.status for r in results) == [CardStatus.DONE, CardStatus.PENDING]
    stored = await registry.card(card.card_id)
    assert stored is not None and stored.status is CardStatus.DONE
    assert sorted(a.userid for a in stored.approvals) == [ARJUN.userid, MEERA.userid]
    assert (await row(db, BranchRequest, 5)).status == "approved"
    assert [o for o, _ in await _outcomes(db, card.card_id)].count(Outcome.DONE) == 1


async def test_three_pressing_a_two_approver_card_at_once(db: Database) -> None:
    """Arjun, Meera and (after escalation) Priya press at once: one write, two approvals kept."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 5}, RAVI)
    stored = await registry.card(card.card_id)
    assert stored is not None
    priya = Issuee(PRIYA.userid, PRIYA.name)
    assert await CardStore(db).escalate(card.card_id, [*stored.issued_to, priya], registry.now())
    results = await asyncio.gather(
        *(approve(registry, card, who) for who in (ARJUN, MEERA, PRIYA)), return_exceptions=True
    )
    ok = [r for r in results if not isinstance(r, BaseException)]
    assert [r.card.status for r in ok].count(CardStatus.DONE) == 1
    assert all(isinstance(r, CardDecidedError) for r in results if isinstance(r, BaseException))
    final = await registry.card(card.card_id)
    assert final is not None and len(final.approvals) == 2
    assert (await row(db, BranchRequest, 5)).status == "approved"


async def test_only_the_asker_may_withdraw(db: Database) -> None:
    """Ravi withdraws his card; Arjun cannot; a withdrawn card cannot be approved after."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 1}, RAVI)
    with pytest.raises(NotTheAskerError):
        await registry.withdraw(DEFAULT_AGENT, card.card, ARJUN)
    ended = await registry.withdraw(DEFAULT_AGENT, card.card, RAVI)
    assert ended.card.status is CardStatus.WITHDRAWN
    with pytest.raises(CardDecidedError, match="withdrawn by Ravi Kumar"):
        await approve(registry, card, ARJUN)
    assert (await row(db, BranchRequest, 1)).status == "pending"


async def _refund(registry: Registry, amount: str | None) -> Proposal:
    args: dict[str, object] = {"order_id": 5}
    if amount:
        args["amount"] = amount
    return await propose(registry, "refund_order", args, ARJUN)


async def test_the_identical_write_is_told_which_card_waits(db: Database) -> None:
    """Asking again for the identical change names the waiting card by what it does and
    whom it waits for; it said only "a card"."""
    registry = make_registry(db)
    first = await _refund(registry, "100")
    with pytest.raises(CardLiveError) as told:
        await _refund(registry, "100")
    assert (
        f"already waiting on a card: {first.summary.rstrip('.')}, waiting for Arjun Mehta."
        in str(told.value)
    )


async def test_one_live_card_per_target(db: Database) -> None:
    """The identical write points to its live card; another write on the same order replaces
    it, and the replaced card can no longer run."""
    registry = make_registry(db)
    small = await _refund(registry, "100")
    with pytest.raises(CardLiveError, match="already waiting on a card"):
        await _refund(registry, "100")
    bigger = await _refund(registry, "150")
    assert bigger.replaced == (small.card_id,)
    old = await registry.card(small.card_id)
    assert old is not None and old.status is CardStatus.SUPERSEDED
    assert old.replaced_by == bigger.card_id
    with pytest.raises(CardDecidedError, match="replaced"):
        await approve(registry, small, ARJUN)
    assert (await approve(registry, bigger, ARJUN)).ok
    async with db.session() as session:
        refunds = (await session.scalars(select(Refund).where(Refund.order_id == 5))).all()
    assert [r.amount for r in refunds][-1:] == [15000]


async def test_expiry_is_decided_once_across_sweeps(db: Database) -> None:
    """Two sweeps after the card's time: the first moves it to expired, the second finds none."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 1}, RAVI)
    later = registry.now() + CARD_TTL + timedelta(seconds=1)
    first, second = await asyncio.gather(
        CardStore(db).expire_due(later), CardStore(db).expire_due(later)
    )
    assert [r.card_id for r in [*first, *second]] == [card.card_id]
    expired = await registry.card(card.card_id)
    assert expired is not None and expired.status is CardStatus.EXPIRED


async def test_two_proposals_for_one_target_at_once_leave_one_live_card(db: Database) -> None:
    """Arjun and Meera ask for different refunds on one order at the same moment: however the
    race goes, exactly one of their cards is live afterwards and the other was refused or
    replaced (on PostgreSQL the database's unique index decides; on SQLite writes queue)."""
    registry = make_registry(db)
    asked = await asyncio.gather(
        propose(registry, "refund_order", {"order_id": 5, "amount": "100"}, ARJUN),
        propose(registry, "refund_order", {"order_id": 5, "amount": "150"}, MEERA),
        return_exceptions=True,
    )
    assert all(not isinstance(a, BaseException) or "same thing" in str(a) for a in asked), asked
    async with db.session() as session:
        live = (
            await session.scalars(
                select(ProposalRow).where(
                    ProposalRow.target == "order:5:refund", ProposalRow.status == "pending"
                )
            )
        ).all()
    assert len(live) == 1


async def test_an_expired_card_on_the_target_is_ended_by_the_next_one(db: Database) -> None:
    """A card whose time ran out but which no sweep has moved yet does not block a new card on
    its target: the new proposal ends it as expired (and the surface shows it so)."""
    clock = SteppedClock()
    registry = make_registry(db, clock=clock)
    old = await _refund(registry, "100")
    clock.now = old.expires_at + timedelta(seconds=1)
    new = await _refund(registry, "100")
    assert new.replaced == (old.card_id,)
    ended = await registry.card(old.card_id)
    assert ended is not None and ended.status is CardStatus.EXPIRED
    assert (Outcome.EXPIRED, "time ran out") in await _outcomes(db, old.card_id)


async def test_an_approval_slipped_in_before_the_count_is_read_again(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Meera's approval commits between Arjun's read of a two-approver card and his conditional
    UPDATE: his UPDATE matches nothing (the count moved), the card is read again, his approval
    becomes the second, and the write runs once with both named. PostgreSQL only: SQLite
    queues writers, so the two cannot interleave there."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one writer at a time; nothing can slip in between")
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 5}, RAVI)
    original = CardStore.approve_once
    slipped: list[bool] = []

    async def interleaved(store: CardStore, card_id: str, **kwargs: Any) -> bool:
        if not slipped:
            slipped.append(True)
            assert (await approve(registry, card, MEERA)).partly  # commits on its own
        return await original(store, card_id, **kwargs)

    monkeypatch.setattr(CardStore, "approve_once", interleaved)
    decision = await approve(registry, card, ARJUN)
    assert slipped and decision.ok
    assert decision.card.decided_by_name == "Meera Iyer and Arjun Mehta"
    assert (await row(db, BranchRequest, 5)).status == "approved"
    assert [o for o, _ in await _outcomes(db, card.card_id)].count(Outcome.DONE) == 1


async def test_a_first_approver_who_lost_the_role_no_longer_counts(db: Database) -> None:
    """Arjun approves request 5 (1 of 2), then is made staff: Meera's approval is then only the
    first that stands, so nothing runs until another manager approves."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 5}, RAVI)
    assert (await approve(registry, card, ARJUN)).partly
    async with db.session(write=True) as session, session.begin():
        await session.execute(
            sa_update(Person).where(Person.id == ARJUN.userid).values(role="staff")
        )
    meeras = await approve(registry, card, MEERA)
    assert meeras.partly and [a.name for a in meeras.card.approvals] == ["Meera Iyer"]
    assert (await row(db, BranchRequest, 5)).status == "pending"


async def test_a_demoted_issuee_cannot_reject(db: Database) -> None:
    """Rejecting is deciding: Meera, made staff after the card was issued to her, is refused."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 1}, RAVI)
    with pytest.raises(RoleRequiredError):
        await registry.reject(DEFAULT_AGENT, card.card, replace(MEERA, role=Role.STAFF), "no")
    stored = await registry.card(card.card_id)
    assert stored is not None and stored.status is CardStatus.PENDING
