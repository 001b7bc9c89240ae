"""approve_request and reject_request: the card, the refusals, the re-check and the decision."""

from __future__ import annotations

import pytest

from tests.merchant.writes_support import (
    ARJUN,
    MEERA,
    RAVI,
    approve,
    assert_routed,
    details,
    make_registry,
    propose,
    row,
    snapshot,
    untargeted,
)
from tools.cards.record import CardStatus
from tools.db import Database, ProposalRow
from tools.errors import ConflictError, InvalidArgumentsError, NotFoundError
from tools.toolsets.merchant.models import BranchRequest
from tools.toolsets.merchant.writes_requests import ApproveRequestArgs, RejectRequestArgs


async def test_approve_card_names_request_branch_and_requester(db: Database) -> None:
    """The approval card names the request, branch and requester by id and name, and warns of nothing."""
    proposal = await propose(make_registry(db), "approve_request", {"request_id": 3}, ARJUN)
    assert proposal.summary == (
        "Approve request 3 — a ₹5,000.00 discount for Whitefield (branch 3), asked by Ravi Kumar."
    )
    assert details(proposal) == {
        "Request": "3 — discount",
        "Branch": "Whitefield (branch 3, Bengaluru)",
        "Amount": "₹5,000.00",
        "Asked by": "Ravi Kumar",
        "Their reason": "Corporate lunch for 40 people at a tech park next door.",
        "Status": "pending → approved",
    }
    assert proposal.warning is None


async def test_approve_card_shows_the_note(db: Database) -> None:
    """A note given with the approval is shown on the card and sealed into it."""
    args = {"request_id": 1, "note": "Order from the usual supplier."}
    proposal = await propose(make_registry(db), "approve_request", args, ARJUN)
    assert details(proposal)["Note"] == "Order from the usual supplier."
    assert proposal.args == ApproveRequestArgs(request_id=1, note="Order from the usual supplier.")


async def test_approving_your_own_request_warns(db: Database) -> None:
    """Request 4 was asked for by Arjun himself, so his approval card says so."""
    proposal = await propose(make_registry(db), "approve_request", {"request_id": 4}, ARJUN)
    assert proposal.warning == "Arjun Mehta asked for request 4 themselves."
    ravis = await propose(make_registry(db), "approve_request", {"request_id": 1}, RAVI)
    assert ravis.warning is None  # his own request, decided by a manager: nothing unusual


async def test_reject_card_shows_the_reason(db: Database) -> None:
    """The rejection card shows pending → rejected and the reason the branch will read."""
    args = {"request_id": 6, "reason": "  Fix the old printer first.  "}
    proposal = await propose(make_registry(db), "reject_request", args, MEERA)
    assert proposal.summary == (
        "Reject request 6 — a ₹2,300.00 expense for Koramangala (branch 2), asked by Ravi Kumar."
    )
    assert details(proposal)["Status"] == "pending → rejected"
    assert details(proposal)["Rejected because"] == "Fix the old printer first."
    assert proposal.warning is None


async def test_proposals_change_nothing(db: Database) -> None:
    """Proposing an approval and a rejection leaves every merchant row as it was."""
    registry, before = make_registry(db), await snapshot(db)
    await propose(registry, "approve_request", {"request_id": 3}, ARJUN)
    await propose(registry, "reject_request", {"request_id": 5, "reason": "Too much."}, ARJUN)
    assert await snapshot(db) == before


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("approve_request", {"request_id": 3}),
        ("reject_request", {"request_id": 3, "reason": "No."}),
    ],
)
async def test_staff_decisions_go_to_the_managers(
    db: Database, tool: str, args: dict[str, object]
) -> None:
    """Ravi (staff) may ask to decide a request; the card goes to the managers and owner."""
    await assert_routed(db, tool, args, RAVI, [ARJUN, MEERA])


async def test_approval_records_the_decision(db: Database) -> None:
    """After approval the request is approved by Arjun, with his note and the card's id."""
    registry = make_registry(db)
    proposal = await propose(registry, "approve_request", {"request_id": 3, "note": "Go."}, ARJUN)
    decision = await approve(registry, proposal, ARJUN)
    assert decision.card.status is CardStatus.DONE, decision.error
    request = await row(db, BranchRequest, 3)
    assert (request.status, request.decided_by, request.decision_note) == ("approved", 2, "Go.")
    assert request.decided_card_id == proposal.card_id
    assert request.decided_at is not None
    assert decision.card.outcome == "Request 3 was approved by Arjun Mehta."


async def test_rejection_records_the_reason(db: Database) -> None:
    """After approval of a rejection card the request is rejected with the reason as its note."""
    registry = make_registry(db)
    args = {"request_id": 5, "reason": "Stock up after the audit."}
    proposal = await propose(registry, "reject_request", args, MEERA)
    decision = await approve(registry, proposal, MEERA)
    assert decision.ok, decision.error
    request = await row(db, BranchRequest, 5)
    assert (request.status, request.decided_by) == ("rejected", 3)
    assert request.decision_note == "Stock up after the audit."
    assert request.decided_card_id == proposal.card_id


async def test_request_decided_meanwhile_fails_at_execution(db: Database) -> None:
    """Meera approves request 3 through her own card first; Arjun's card then fails and writes nothing."""
    registry = make_registry(db)
    arjuns = await untargeted(
        db, await propose(registry, "reject_request", {"request_id": 3, "reason": "No."}, ARJUN)
    )
    meeras = await propose(registry, "approve_request", {"request_id": 3}, MEERA)
    assert (await approve(registry, meeras, MEERA)).ok
    decision = await approve(registry, arjuns, ARJUN)
    assert decision.card.status is CardStatus.FAILED
    assert isinstance(decision.error, ConflictError)
    assert "Request 3 was already approved by Meera Iyer at" in str(decision.error)
    request = await row(db, BranchRequest, 3)
    assert (request.status, request.decided_by) == ("approved", 3)
    assert request.decided_card_id == meeras.card_id


async def test_decided_request_is_refused_at_proposal(db: Database) -> None:
    """Request 7 was approved by Arjun days ago; proposing it again says so before any card."""
    with pytest.raises(ConflictError, match="Request 7 was already approved by Arjun Mehta"):
        await propose(make_registry(db), "approve_request", {"request_id": 7}, MEERA)


@pytest.mark.parametrize("request_id", [999, 9])
async def test_unknown_or_foreign_request_is_not_found(db: Database, request_id: int) -> None:
    """A request that does not exist, or belongs to Harbor Books (9), is not found for Fiesta."""
    with pytest.raises(NotFoundError, match=f"There is no request {request_id}"):
        await propose(make_registry(db), "approve_request", {"request_id": request_id}, ARJUN)


async def test_reject_needs_a_reason(db: Database) -> None:
    """A blank reason is refused by the schema: a rejection must say why."""
    args = {"request_id": 3, "reason": "   "}
    with pytest.raises(InvalidArgumentsError):
        await propose(make_registry(db), "reject_request", args, ARJUN)


async def test_sealed_arguments_round_trip_as_ints(db: Database) -> None:
    """The stored card arguments read back as the same model, the request id still an int."""
    registry = make_registry(db)
    args = {"request_id": 3.0, "reason": "Budget is spent."}
    proposal = await propose(registry, "reject_request", args, ARJUN)
    record = await registry.card(proposal.card_id)
    assert record is not None
    assert record.args == {"request_id": 3, "reason": "Budget is spent."}
    again = RejectRequestArgs.model_validate(record.args)
    assert again == proposal.args
    assert type(again.request_id) is int


async def test_request_id_stored_as_float_still_approves_request_3(db: Database) -> None:
    """The seed's "request 0" story: an id read back from JSON as 3.0 still decides request 3."""
    registry = make_registry(db)
    proposal = await propose(registry, "approve_request", {"request_id": 3}, ARJUN)
    async with db.session() as session, session.begin():
        stored = await session.get(ProposalRow, proposal.card_id)
        assert stored is not None
        stored.args = {"request_id": 3.0, "note": None}
    decision = await approve(registry, proposal, ARJUN)
    assert decision.card.status is CardStatus.DONE, decision.error
    assert (await row(db, BranchRequest, 3)).status == "approved"
