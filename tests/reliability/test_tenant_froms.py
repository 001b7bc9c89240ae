"""The FROMs a tenant session scopes are exactly the ones SQLAlchemy's ``get_final_froms`` lists.

Tenant scoping once asked ``Select.get_final_froms()`` for every statement, which renders the
whole statement to SQL text first: a quarter of each tenant read's CPU. It now builds only the
compile state that lists the FROMs (``tenancy._final_froms``), through SQLAlchemy internals; a
FROM it missed would be a table left unscoped, so each shape of SELECT is compared here with
the public accessor, table by table, and a SQLAlchemy upgrade that changes the internals fails.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import aliased, selectinload
from sqlalchemy.sql.selectable import Join

from tools.db.tenancy import _final_froms
from tools.toolsets.merchant.models import Branch, BranchRequest, Order, Product, Stock

_orders, _branches = Order.__table__, Branch.__table__
_other = aliased(Branch)
_counts = select(Order.branch_id, func.count().label("n")).group_by(Order.branch_id).subquery()

SHAPES: dict[str, Any] = {  # Selects of different row types
    "orm entity": select(Order).where(Order.id == 1),
    "orm columns": select(Order.id, Order.tenant_id),
    "orm join": select(Order, Branch).join(Branch, Branch.id == Order.branch_id),
    "orm alias": select(Order).join(_other, _other.id == Order.branch_id),
    "orm eager option": select(BranchRequest).options(selectinload(BranchRequest.branch)),
    "core table": select(_orders),
    "core join": select(_orders.c.id).join(_branches, _branches.c.id == _orders.c.branch_id),
    "implicit from in where": select(Order.id).where(Branch.id == Order.branch_id),
    "two tables, no join": select(Product.id, Stock.quantity),
    "subquery": select(Branch.name, _counts.c.n).join(_counts, _counts.c.branch_id == Branch.id),
    "aggregate": select(func.count()).select_from(BranchRequest),
}


def _tables(froms: Any) -> list[Any]:
    """The tables and aliases of a FROM list, joins opened up, in order."""
    out: list[Any] = []
    for source in froms:
        out.extend(_tables([source.left, source.right]) if isinstance(source, Join) else [source])
    return out


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_scoping_sees_every_from_sqlalchemy_lists(shape: str) -> None:
    """Every table, alias and subquery ``get_final_froms`` lists, and nothing else, in order."""
    statement = SHAPES[shape]
    ours, theirs = list(_final_froms(statement)), list(statement.get_final_froms())
    assert _tables(ours) == _tables(theirs)
    assert len(ours) == len(theirs)
    assert all(a is b or a.compare(b) for a, b in zip(ours, theirs, strict=True))
