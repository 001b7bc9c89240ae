"""Starting the demo afresh: what the tour used up comes back, the audit stays, a real merchant's database is refused."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, func, select

from tests.merchant.writes_support import ARJUN, approve, count, make_registry, propose, row
from tools.db import AuditRow, Database, ProposalRow
from tools.errors import ConflictError
from tools.toolsets.merchant.demo import load_demo
from tools.toolsets.merchant.demo_reset import reset_demo
from tools.toolsets.merchant.models import BranchRequest, Tenant


async def test_a_reset_brings_back_an_approved_request_and_keeps_the_audit(db: Database) -> None:
    """After request 1 was approved (the tour's first step), a reset makes it pending again
    with no card left; the audit rows of what happened before are all still there. Walked a
    second time, the tour met "Request 1 was already approved" until the database was
    deleted by hand."""
    registry = make_registry(db)
    card = await propose(registry, "approve_request", {"request_id": 1}, ARJUN)
    await approve(registry, card, ARJUN)
    assert (await row(db, BranchRequest, 1)).status == "approved"
    audited = await count(db, AuditRow)

    summary = await reset_demo(db)

    assert summary.loaded and summary.orders == 90
    assert (await row(db, BranchRequest, 1)).status == "pending"
    assert await count(db, ProposalRow) == 0
    assert await count(db, AuditRow) == audited
    assert await count(db, BranchRequest) == 15


async def test_a_database_with_another_merchant_is_not_reset(db: Database) -> None:
    """A merchant that is not the demo's makes the reset refuse, naming it, and nothing goes."""
    async with db.session(write=True) as session, session.begin():
        session.add(Tenant(id=3, name="Corner Bakery", currency="EUR", locale="en_IE"))
    with pytest.raises(ConflictError, match=r"other than the demo's \(Corner Bakery\)"):
        await reset_demo(db)
    async with db.session() as session:
        assert await session.scalar(select(func.count()).select_from(Tenant)) == 3


async def test_a_demo_loaded_before_the_tours_requests_gets_them(db: Database) -> None:
    """A demo database from before requests 11 to 15 existed gets them on the next `demo`,
    and says so; without them the README's batch steps named requests that did not exist."""
    async with db.session(write=True) as session, session.begin():
        await session.execute(delete(BranchRequest).where(BranchRequest.id > 10))
    summary = await load_demo(db)
    assert not summary.loaded and summary.tour_requests == 5
    assert (await row(db, BranchRequest, 14)).status == "pending"
    assert (await load_demo(db)).tour_requests == 0
