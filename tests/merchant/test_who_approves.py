"""Who may approve and who may replace a card: nobody approves a request they raised while
someone else could, and a newer card ends an older one only when its asker may end it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.merchant.writes_support import (
    ARJUN,
    MEERA,
    PRIYA,
    RAVI,
    SAM,
    approve,
    make_registry,
    propose,
    row,
    update,
)
from tools.cards.record import CardStatus, Issuee
from tools.cards.store import CardStore
from tools.db import Database
from tools.errors import CardHeldError, NotYourCardError
from tools.people.policy import Policies, SelfApproval
from tools.toolsets.merchant import DEFAULT_AGENT
from tools.toolsets.merchant.models import BranchRequest


async def _self_approval(db: Database, rule: SelfApproval) -> None:
    policies = Policies(db)
    await policies.put(1, replace(await policies.get(1), self_approval=rule))


async def test_a_manager_does_not_approve_his_own_request(db: Database) -> None:
    """Request 4 (₹7,800, Indiranagar) was raised by Arjun: his card for it goes to Meera,
    his own press is refused, and Meera's approves it. The card used to warn "Arjun Mehta
    asked for request 4 themselves" and then let him approve it."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 4}, ARJUN)
    assert card.routing is not None and card.routing.routed
    assert [i.name for i in card.routing.issued_to] == ["Meera Iyer"]
    assert "raised" in card.public()["routed"]
    with pytest.raises(NotYourCardError):
        await approve(registry, card, ARJUN)
    assert (await row(db, BranchRequest, 4)).status == "pending"
    decision = await approve(registry, card, MEERA)
    assert decision.ok and (await row(db, BranchRequest, 4)).decided_by == MEERA.userid


async def test_staff_asking_for_a_managers_request_leaves_him_out(db: Database) -> None:
    """Ravi asks to approve Arjun's request 4: only Meera is issued the card."""
    card = await propose(make_registry(db), "approve_request", {"request_id": 4}, RAVI)
    assert card.routing is not None
    assert [i.name for i in card.routing.issued_to] == ["Meera Iyer"]


async def test_alone_sam_still_approves_his_own_request(db: Database) -> None:
    """Harbor Books has only Sam: he raised request 9 and approves it himself."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 9}, SAM)
    assert card.routing is not None and not card.routing.routed
    assert (await approve(registry, card, SAM)).ok


async def test_allowed_keeps_the_old_behaviour(db: Database) -> None:
    """A merchant that sets self-approval to "allowed" lets Arjun approve request 4 himself."""
    await _self_approval(db, SelfApproval.ALLOWED)
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 4}, ARJUN)
    assert (await approve(registry, card, ARJUN)).ok


async def test_under_never_an_editor_is_the_asker_of_the_edited_card(db: Database) -> None:
    """Under "never" Arjun's own refund card goes to Meera; when Meera edits it, the new card
    is hers, so it goes to Arjun and not to her."""
    await _self_approval(db, SelfApproval.NEVER)
    registry = make_registry(db)
    card = await propose(registry, "refund_order", {"order_id": 5, "amount": "100"}, ARJUN)
    assert card.routing is not None
    assert [i.name for i in card.routing.issued_to] == ["Meera Iyer"]
    edited = await registry.edit(DEFAULT_AGENT, card.card, MEERA, {"amount": "50"})
    assert edited.proposal is not None and edited.proposal.routing is not None
    assert [i.name for i in edited.proposal.routing.issued_to] == ["Arjun Mehta"]
    with pytest.raises(NotYourCardError):
        await approve(registry, edited.proposal, MEERA)


async def test_an_owner_who_raised_a_request_is_refused_even_after_escalation(
    db: Database,
) -> None:
    """Priya raised request 6; Ravi's card for it goes to the managers. Escalation adding
    the owners must not make her an approver of her own request."""
    await update(db, BranchRequest, 6, requested_by=PRIYA.userid)
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 6}, RAVI)
    stored = await registry.card(card.card_id)
    assert stored is not None and stored.kept_out == (PRIYA.userid,)
    priya = Issuee(PRIYA.userid, PRIYA.name)
    assert await CardStore(db).escalate(card.card_id, [*stored.issued_to, priya], registry.now())
    with pytest.raises(NotYourCardError):
        await approve(registry, card, PRIYA)
    assert (await row(db, BranchRequest, 6)).status == "pending"


async def test_a_batch_keeps_the_requester_out(db: Database) -> None:
    """Arjun asks to approve requests 3 and 4 as one card: it waits for Meera, since request 4
    is his own; the batch must not hand it back to him."""
    registry = make_registry(db)
    three = await propose(registry, "approve_request", {"request_id": 3}, ARJUN)
    four = await propose(registry, "approve_request", {"request_id": 4}, ARJUN)
    made = await registry.batches.bundle(ARJUN, [three.card_id, four.card_id])
    assert [i.name for i in made.routing.issued_to] == ["Meera Iyer"]


async def test_staff_cannot_replace_a_managers_card(db: Database) -> None:
    """Arjun asks to reject request 2; Ravi then asks to approve it. Ravi's ask used to end
    Arjun's card; now it is refused, names Arjun's card, and that card stays live."""
    registry = make_registry(db)
    arjuns = await propose(
        registry, "reject_request", {"request_id": 2, "reason": "Not our fault"}, ARJUN
    )
    with pytest.raises(CardHeldError, match="Arjun Mehta") as held:
        await propose(registry, "approve_request", {"request_id": 2}, RAVI)
    assert held.value.card_id == arjuns.card_id
    stored = await registry.card(arjuns.card_id)
    assert stored is not None and stored.status is CardStatus.PENDING


async def test_staff_cannot_drop_a_first_of_two_approvals(db: Database) -> None:
    """Arjun approved request 5 (₹42,000) as 1 of 2; Ravi asking to reject it is refused, and
    Arjun's approval still stands for Meera's second."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 5}, ARJUN)
    assert (await approve(registry, card, ARJUN)).partly
    with pytest.raises(CardHeldError):
        await propose(registry, "reject_request", {"request_id": 5, "reason": "Too much"}, RAVI)
    assert (await approve(registry, card, MEERA)).ok


async def test_the_same_role_or_higher_may_replace_a_card(db: Database) -> None:
    """Meera may replace Arjun's card (same role); Arjun may replace Ravi's (a higher role)."""
    registry = make_registry(db)
    ravis = await propose(registry, "approve_request", {"request_id": 2}, RAVI)
    arjuns = await propose(registry, "reject_request", {"request_id": 2, "reason": "No"}, ARJUN)
    assert arjuns.replaced == (ravis.card_id,)
    meeras = await propose(registry, "approve_request", {"request_id": 2}, MEERA)
    assert meeras.replaced == (arjuns.card_id,)
