"""Resolves names to rows within the caller's tenant and shapes read results; never writes.

"close Whitefield" must become branch 3, Whitefield, Bengaluru before a card is drawn; a name
that matches nothing or several things is a refusal that lists the candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from tools.db.prescoped import run, tenant_statement
from tools.errors import AmbiguousError, NotFoundError
from tools.schema import MAX_ID
from tools.tool import Result
from tools.toolsets.merchant.models import Branch, Product, Tenant
from tools.toolsets.merchant.money import format_money

__all__ = [
    "MAX_ID",
    "ROW_LIMIT",
    "BranchRef",
    "Money",
    "ProductRef",
    "counted_noun",
    "find_branch",
    "find_product",
    "load_tenant",
    "page",
    "resolve_branch",
    "resolve_product",
    "tenant_name",
]

ROW_LIMIT = 50

T = TypeVar("T")


class Money:
    """Formats minor units in one tenant's currency and locale."""

    def __init__(self, tenant: Tenant) -> None:
        self.currency, self.locale = tenant.currency, tenant.locale

    def __call__(self, minor: int) -> str:
        return format_money(minor, self.currency, self.locale)


async def load_tenant(session: AsyncSession, tenantid: int) -> Tenant:
    tenant = await session.get(Tenant, tenantid)
    if tenant is None:
        raise NotFoundError(f"Merchant {tenantid} does not exist.")
    return tenant


async def tenant_name(session: AsyncSession, tenantid: int) -> str:
    tenant = await session.get(Tenant, tenantid)
    return tenant.name if tenant else f"merchant {tenantid}"


def _ref_id(ref: str | int) -> int | None:
    if isinstance(ref, int):
        return ref
    text = ref.strip().lstrip("#")
    # ASCII only: "²".isdigit() is true, yet int("²") raises ValueError.
    return int(text) if text.isascii() and text.isdigit() else None


async def find_branch(session: AsyncSession, ref: str | int) -> Branch:
    """A branch by id ("3", 3, "#3") or by name, exact or unambiguous prefix, any case."""
    by_id = _ref_id(ref)
    if by_id is not None:
        branch = await session.get(Branch, by_id) if 0 < by_id <= MAX_ID else None
        if branch is None:
            raise NotFoundError(f"There is no branch {by_id}. {await _known_branches(session)}")
        return branch
    name = str(ref).strip()
    return _one(
        await _by_name(session, Branch, Branch.name, name),
        what="branch",
        asked=name,
        label=lambda b: f"{b.name} ({b.city}, branch {b.id})",
        known=await _known_branches(session),
    )


async def find_product(session: AsyncSession, ref: str) -> Product:
    """A product by SKU (exact, any case) or by name (exact or unambiguous prefix)."""
    text = ref.strip()
    stmt = select(Product).where(func.lower(Product.sku) == text.lower())
    by_sku = (await session.scalars(stmt)).all()
    if by_sku:
        return by_sku[0]
    return _one(
        await _by_name(session, Product, Product.name, text),
        what="product",
        asked=text,
        label=lambda p: f"{p.name} (SKU {p.sku})",
        known="Ask for stock levels to see the products.",
    )


async def _by_name(session: AsyncSession, model: type[T], column: Any, name: str) -> Sequence[T]:
    exact = (await session.scalars(select(model).where(func.lower(column) == name.lower()))).all()
    if exact:
        return exact
    escaped = name.lower().replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")
    pattern = escaped + "%"
    stmt = select(model).where(func.lower(column).like(pattern, escape="\\")).limit(10)
    return (await session.scalars(stmt)).all()


@dataclass(frozen=True, slots=True)
class BranchRef:
    """A branch as a write's card and re-check read it: a plain value, not an ORM row."""

    id: int
    name: str
    city: str
    status: str


@dataclass(frozen=True, slots=True)
class ProductRef:
    """A product as a write's card and re-check read it: a plain value, not an ORM row."""

    id: int
    sku: str
    name: str
    price: int


_BRANCHES, _PRODUCTS = Branch.__table__, Product.__table__
_B, _P = _BRANCHES.c, _PRODUCTS.c
_BRANCH_BY_ID = tenant_statement(
    select(_B.id, _B.name, _B.city, _B.status).where(_B.id == bindparam("id"))
)
_PRODUCT_BY_SKU = tenant_statement(
    select(_P.id, _P.sku, _P.name, _P.price).where(func.lower(_P.sku) == bindparam("sku"))
)


async def resolve_branch(session: AsyncSession, ref: str | int) -> BranchRef:
    """``find_branch`` for a write's propose and execute: by id in one pre-scoped Core read.

    Both halves of a write resolve the branch, and the ORM path (tenant scoping at execution,
    an identity map) cost ten times the read itself. A name, or an id that finds nothing, takes
    ``find_branch``'s path with its candidates and refusals.
    """
    by_id = _ref_id(ref)
    if by_id is not None and 0 < by_id <= MAX_ID:
        row = (await run(session, _BRANCH_BY_ID, {"id": by_id})).first()
        if row is not None:
            return BranchRef(row.id, row.name, row.city, row.status)
    branch = await find_branch(session, ref)
    return BranchRef(branch.id, branch.name, branch.city, branch.status)


async def resolve_product(session: AsyncSession, ref: str) -> ProductRef:
    """``find_product`` for a write's propose and execute: by SKU in one pre-scoped Core read."""
    row = (await run(session, _PRODUCT_BY_SKU, {"sku": ref.strip().lower()})).first()
    if row is None:
        product = await find_product(session, ref)
        return ProductRef(product.id, product.sku, product.name, product.price)
    return ProductRef(row.id, row.sku, row.name, row.price)


def _one(found: Sequence[T], *, what: str, asked: str, label: Any, known: str) -> T:
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFoundError(f"There is no {what} called {asked!r}. {known}")
    raise AmbiguousError(f"{asked!r} matches more than one {what}.", [label(x) for x in found])


async def _known_branches(session: AsyncSession) -> str:
    names = (await session.scalars(select(Branch.name).order_by(Branch.id))).all()
    return f"Branches: {', '.join(names)}." if names else "There are no branches."


def counted_noun(count: int, one: str, many: str) -> str:
    """ "1 order", "2 orders", "no orders": a count with its noun in agreement."""
    if count == 0:
        return f"no {many}"
    return f"{count} {one if count == 1 else many}"


def page(
    rows: list[dict[str, Any]],
    *,
    total: int,
    noun: str,
    whose: str,
    filters: str = "",
    one: str | None = None,
) -> Result:
    """A read result capped at ``ROW_LIMIT`` rows with a scope line stating whose and how many.

    ``noun`` is the plural ("pending requests"), ``one`` the singular when it is not ``noun``
    without its last "s". A complete list just counts ("2 pending requests"); a cut one says so.
    """
    shown = rows[:ROW_LIMIT]
    where = f" {filters}" if filters else ""
    if total > len(shown):
        scope = f"{whose}: {len(shown)} of {total} {noun}{where} (truncated; narrow the search to see the rest)"
    else:
        counted = counted_noun(total, one or noun.removesuffix("s"), noun)
        scope = f"{whose}: {counted}{where}"
    return Result(rows=shown, count=total, scope=scope)
