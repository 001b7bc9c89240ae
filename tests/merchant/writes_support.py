"""Shared by the write-tool tests: the demo people, a registry, and ways to look at the data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy import update as sa_update

from tools.approving.approval import Decision
from tools.caller import Caller, Role
from tools.cards.tokens import CardSigner, Clock, utcnow
from tools.db import Database, ProposalRow
from tools.errors import NotYourCardError
from tools.registry import Registry
from tools.tool import Proposal
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry
from tools.toolsets.merchant.models import (
    Branch,
    BranchRequest,
    Order,
    PriceChange,
    Product,
    Refund,
    Stock,
    StockMovement,
)

__all__ = [
    "ARJUN",
    "MEERA",
    "PRIYA",
    "RAVI",
    "SAM",
    "approve",
    "assert_routed",
    "count",
    "detail",
    "details",
    "make_registry",
    "propose",
    "row",
    "snapshot",
    "untargeted",
    "update",
]

PRIYA = Caller(userid=1, tenantid=1, role=Role.OWNER, name="Priya Raman")
ARJUN = Caller(userid=2, tenantid=1, role=Role.MANAGER, name="Arjun Mehta")
MEERA = Caller(userid=3, tenantid=1, role=Role.MANAGER, name="Meera Iyer")
RAVI = Caller(userid=4, tenantid=1, role=Role.STAFF, name="Ravi Kumar")
SAM = Caller(userid=5, tenantid=2, role=Role.OWNER, name="Sam Lee")

# Every table a merchant write may touch; a proposal must leave all of them as they were.
_MERCHANT_TABLES: tuple[type[Any], ...] = (
    Branch,
    BranchRequest,
    Order,
    Refund,
    Product,
    Stock,
    StockMovement,
    PriceChange,
)


def make_registry(db: Database, *, clock: Clock = utcnow) -> Registry:
    return build_registry(db, CardSigner(["test-secret"]), clock=clock)


async def propose(
    registry: Registry, tool: str, args: Mapping[str, Any], caller: Caller
) -> Proposal:
    """Calls a write tool the way the model does and returns the card it proposes."""
    result = await registry.call(DEFAULT_AGENT, tool, args, caller)
    assert result.proposal is not None
    return result.proposal


async def approve(registry: Registry, proposal: Proposal, caller: Caller) -> Decision:
    return await registry.approve(DEFAULT_AGENT, proposal.card, caller)


async def untargeted(db: Database, proposal: Proposal) -> Proposal:
    """Clears the card's target, as on cards stored before one live card per target: then
    several cards on one target may be live, and only the live re-check at execution stands
    between them (what the tests of that re-check need)."""
    async with db.session(write=True) as session, session.begin():
        await session.execute(
            sa_update(ProposalRow).where(ProposalRow.id == proposal.card_id).values(target=None)
        )
    return proposal


async def assert_routed(
    db: Database, tool: str, args: Mapping[str, Any], asker: Caller, to: list[Caller]
) -> None:
    """The asker's role cannot approve ``tool``: the card goes to ``to``, the asker's press is
    refused, and nothing changes."""
    registry, before = make_registry(db), await snapshot(db)
    proposal = await propose(registry, tool, args, asker)
    assert proposal.routing is not None and proposal.routing.routed
    assert [i.userid for i in proposal.routing.issued_to] == [c.userid for c in to]
    with pytest.raises(NotYourCardError):
        await approve(registry, proposal, asker)
    assert await snapshot(db) == before


def details(proposal: Proposal) -> dict[str, str]:
    return {d.label: d.value for d in proposal.details}


def detail(proposal: Proposal, label: str) -> str:
    return details(proposal)[label]


async def snapshot(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every merchant table, to compare before and after a proposal."""
    seen: dict[str, list[tuple[Any, ...]]] = {}
    async with db.session() as session:
        for model in _MERCHANT_TABLES:
            columns = [column.key for column in model.__table__.columns]
            rows = (await session.scalars(select(model).order_by(model.id))).all()
            seen[model.__tablename__] = [tuple(getattr(r, c) for c in columns) for r in rows]
    return seen


async def row(db: Database, model: type[Any], ident: int) -> Any:
    """One row read fresh, outside any tenant (tests look at everything)."""
    async with db.session() as session:
        return await session.get(model, ident)


async def count(db: Database, model: type[Any], *where: Any) -> int:
    async with db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


async def update(db: Database, model: type[Any], ident: int, **values: Any) -> None:
    """Changes a row behind the tools' back, as another person or process would."""
    async with db.session() as session, session.begin():
        target = await session.get(model, ident)
        assert target is not None
        for name, value in values.items():
            setattr(target, name, value)
