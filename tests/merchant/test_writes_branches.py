"""close_branch and reopen_branch: name resolution, the card, the warning, the re-check, the flip."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.merchant.writes_support import (
    ARJUN,
    PRIYA,
    RAVI,
    approve,
    assert_routed,
    count,
    details,
    make_registry,
    propose,
    row,
    snapshot,
    untargeted,
)
from tools.caller import Caller
from tools.cards.record import CardStatus
from tools.db import Database
from tools.errors import AmbiguousError, ConflictError, NotFoundError
from tools.toolsets.merchant.models import Branch, BranchRequest, Order
from tools.toolsets.merchant.writes_branches import CloseBranchArgs


async def _add_branch(db: Database, name: str) -> int:
    """A new Fiesta branch with no orders and no requests."""
    async with db.tenant_session(1) as session, session.begin():
        branch = Branch(
            name=name, city="Bengaluru", status="open", status_changed_at=datetime.now(UTC)
        )
        session.add(branch)
        await session.flush()
        return branch.id


async def test_close_card_warns_of_open_orders_and_requests(db: Database) -> None:
    """Closing Whitefield names it by id and name and warns of its open orders and 4 pending requests (3, 5 and the tour's 12 and 14)."""
    open_orders = await count(db, Order, Order.branch_id == 3, Order.status == "open")
    assert open_orders > 0  # the demo data keeps the newest orders open
    proposal = await propose(make_registry(db), "close_branch", {"branch": "whitefield"}, PRIYA)
    assert proposal.summary == "Close Whitefield (branch 3, Bengaluru)."
    assert details(proposal) == {
        "Branch": "Whitefield (branch 3, Bengaluru)",
        "Status": "open → closed",
        "Open orders": str(open_orders),
        "Pending requests": "4",
    }
    plural = "s" if open_orders != 1 else ""
    assert proposal.warning == (
        f"Whitefield still has {open_orders} open order{plural} and 4 pending requests; "
        "closing it does not cancel or decide them."
    )


async def test_close_card_without_open_work_has_no_warning(db: Database) -> None:
    """A branch with no open orders and no pending requests closes without a warning."""
    new_id = await _add_branch(db, "Jayanagar")
    proposal = await propose(make_registry(db), "close_branch", {"branch": "Jayanagar"}, PRIYA)
    assert proposal.warning is None
    assert details(proposal)["Open orders"] == "0"
    assert proposal.args == CloseBranchArgs(branch=new_id)


async def test_reopen_card_shows_closed_to_open(db: Database) -> None:
    """Reopening MG Road shows closed → open and since when it was closed, with no warning."""
    proposal = await propose(make_registry(db), "reopen_branch", {"branch": "MG Road"}, PRIYA)
    assert proposal.summary == "Reopen MG Road (branch 4, Bengaluru)."
    assert details(proposal)["Branch"] == "MG Road (branch 4, Bengaluru)"
    assert details(proposal)["Status"] == "closed → open"
    assert details(proposal)["Closed since"].endswith(" UTC")
    assert proposal.warning is None


async def test_proposals_change_nothing(db: Database) -> None:
    """Proposing to close and to reopen leaves every branch as it was."""
    registry, before = make_registry(db), await snapshot(db)
    await propose(registry, "close_branch", {"branch": 3}, PRIYA)
    await propose(registry, "reopen_branch", {"branch": 4}, PRIYA)
    assert await snapshot(db) == before


@pytest.mark.parametrize("caller", [ARJUN, RAVI], ids=["manager", "staff"])
@pytest.mark.parametrize("tool", ["close_branch", "reopen_branch"])
async def test_only_an_owner_may_approve(db: Database, tool: str, caller: Caller) -> None:
    """Opening and closing branches needs the owner: a manager's or staff's card goes to Priya."""
    await assert_routed(db, tool, {"branch": 3 if tool == "close_branch" else 4}, caller, [PRIYA])


async def test_close_after_approval(db: Database) -> None:
    """After approval Whitefield is closed, with the time of the change; its orders are untouched."""
    registry = make_registry(db)
    orders_before = await count(db, Order, Order.branch_id == 3, Order.status == "open")
    proposal = await propose(registry, "close_branch", {"branch": "Whitefield"}, PRIYA)
    decision = await approve(registry, proposal, PRIYA)
    assert decision.card.status is CardStatus.DONE, decision.error
    assert decision.card.outcome == "Whitefield (branch 3) is now closed."
    branch = await row(db, Branch, 3)
    assert branch.status == "closed"
    assert branch.status_changed_at == decision.card.decided_at
    assert await count(db, Order, Order.branch_id == 3, Order.status == "open") == orders_before
    assert await count(db, BranchRequest, BranchRequest.branch_id == 3) == 4


async def test_reopen_after_approval(db: Database) -> None:
    """After approval MG Road is open again."""
    registry = make_registry(db)
    proposal = await propose(registry, "reopen_branch", {"branch": "#4"}, PRIYA)
    assert (await approve(registry, proposal, PRIYA)).ok
    assert (await row(db, Branch, 4)).status == "open"


async def test_branch_closed_meanwhile_fails_at_execution(db: Database) -> None:
    """Two cards to close Whitefield: the second approved fails as already closed and changes nothing."""
    registry = make_registry(db)
    first = await untargeted(db, await propose(registry, "close_branch", {"branch": 3}, PRIYA))
    second = await propose(registry, "close_branch", {"branch": "Whitefield"}, PRIYA)
    assert (await approve(registry, first, PRIYA)).ok
    closed_at = (await row(db, Branch, 3)).status_changed_at
    decision = await approve(registry, second, PRIYA)
    assert decision.card.status is CardStatus.FAILED
    assert isinstance(decision.error, ConflictError)
    assert "Whitefield (branch 3) is already closed" in str(decision.error)
    assert (await row(db, Branch, 3)).status_changed_at == closed_at


async def test_already_in_that_state_is_refused_at_proposal(db: Database) -> None:
    """Closing a closed branch or reopening an open one is refused before any card is drawn."""
    registry = make_registry(db)
    with pytest.raises(ConflictError, match="MG Road \\(branch 4\\) is already closed"):
        await propose(registry, "close_branch", {"branch": "mg road"}, PRIYA)
    with pytest.raises(ConflictError, match="Whitefield \\(branch 3\\) is already open"):
        await propose(registry, "reopen_branch", {"branch": 3}, PRIYA)


async def test_name_resolves_to_the_id_in_the_card(db: Database) -> None:
    """ "whitefield" is sealed as the int 3, and reads back from the stored card as an int."""
    registry = make_registry(db)
    proposal = await propose(registry, "close_branch", {"branch": "whitefield"}, PRIYA)
    record = await registry.card(proposal.card_id)
    assert record is not None
    assert record.args == {"branch": 3}
    again = CloseBranchArgs.model_validate(record.args)
    assert again == proposal.args
    assert type(again.branch) is int


async def test_ambiguous_name_lists_the_candidates(db: Database) -> None:
    """With Whitefield and Whitefield East, "white" is ambiguous and the refusal lists both."""
    east = await _add_branch(db, "Whitefield East")
    with pytest.raises(AmbiguousError) as refused:
        await propose(make_registry(db), "close_branch", {"branch": "white"}, PRIYA)
    assert sorted(refused.value.candidates) == [
        "Whitefield (Bengaluru, branch 3)",
        f"Whitefield East (Bengaluru, branch {east})",
    ]


@pytest.mark.parametrize("branch", ["Jayanagar", "Downtown", 5])
async def test_unknown_or_foreign_branch_lists_the_known_ones(db: Database, branch: object) -> None:
    """An unknown name, or a Harbor Books branch, is not found and Fiesta's branches are listed."""
    with pytest.raises(NotFoundError, match="Indiranagar, Koramangala, Whitefield, MG Road"):
        await propose(make_registry(db), "close_branch", {"branch": branch}, PRIYA)
