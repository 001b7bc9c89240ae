"""What every merchant write shares: money in and out, labels with ids AND names, the outcome.

Helpers only; nothing here proposes or performs a write on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from babel.numbers import get_currency_precision
from pydantic import StringConstraints
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from tools.errors import InvalidArgumentsError
from tools.times import time_stamp
from tools.tool import Result, ToolContext
from tools.toolsets.merchant.models import Branch, Person, Product
from tools.toolsets.merchant.money import parse_money
from tools.toolsets.merchant.scope import BranchRef, Money, ProductRef, load_tenant

T = TypeVar("T")

__all__ = [
    "APPROVAL_NOTE",
    "Reason",
    "TenantMoney",
    "arrow",
    "branch_label",
    "card_key",
    "done",
    "locked",
    "person_name",
    "product_label",
    "stamp",
    "tenant_money",
]

# Appended to every write tool's description: the model must know that calling the tool is a
# question to a person, not the change itself, or it reports the change as already made.
# Short on purpose: it is repeated in seven tool descriptions the model reads on every turn,
# and each proposal's result says the same at length.
APPROVAL_NOTE = "Proposes a card; nothing changes until it is approved."

# A reason a person will read later in the ledger; blank after trimming counts as missing.
Reason = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]


@dataclass(frozen=True, slots=True)
class TenantMoney:
    """The tenant's currency: formats minor units and reads major units the way the card shows."""

    currency: str
    show: Money

    def minor(self, tool: str, field: str, amount: Decimal) -> int:
        """Major units from the arguments into minor units; too many decimals is a refusal."""
        try:
            return parse_money(amount, self.currency)
        except ValueError as bad:
            raise InvalidArgumentsError.bad_value(tool, field, str(bad)) from None

    def major(self, minor: int) -> Decimal:
        """Minor units back into major units with the currency's decimals ("1240.00")."""
        return Decimal(minor).scaleb(-self.digits)

    def major_whole(self, major: int) -> int:
        """A threshold written in whole major units, in minor units."""
        return major * int(10**self.digits)

    @property
    def digits(self) -> int:
        return int(get_currency_precision(self.currency))


async def tenant_money(ctx: ToolContext) -> TenantMoney:
    tenant = await load_tenant(ctx.session, ctx.caller.tenantid)
    return TenantMoney(tenant.currency, Money(tenant))


def card_key(ctx: ToolContext) -> str:
    """The approved card's id, which every ledger row stores as its idempotency key."""
    if ctx.card_id is None:
        # Only approve() runs execute, and it always passes the card; reaching this is a bug.
        raise RuntimeError("a write ran without the card that approved it")
    return ctx.card_id


async def person_name(session: AsyncSession, person_id: int | None) -> str:
    """A person's name for a sentence; "someone" when the row is gone or was never recorded."""
    if person_id is None:
        return "someone"
    person = await session.get(Person, person_id)
    return person.name if person else "someone no longer listed"


def branch_label(branch: Branch | BranchRef) -> str:
    return f"{branch.name} (branch {branch.id}, {branch.city})"


def product_label(product: Product | ProductRef) -> str:
    return f"{product.name} (SKU {product.sku}, product {product.id})"


def arrow(before: object, after: object) -> str:
    return f"{before} → {after}"


def stamp(at: datetime | None) -> str:
    """A time in text a person reads, as ``tools.times`` writes every such time."""
    return time_stamp(at) if at else "an unknown time"


def done(ctx: ToolContext, note: str, row: dict[str, Any], what: str) -> Result:
    """The result of an executed write: one row, and a past-tense note the card shows as outcome."""
    whose = ctx.tenant_name or f"merchant {ctx.caller.tenantid}"
    return Result(rows=[row], count=1, scope=f"{whose}: {what}", note=note)


def locked(stmt: Select[T]) -> Select[T]:
    """The statement under a row lock, its rows read fresh into the session.

    The lock makes a second card for the same row wait, then see the first one's write (two
    managers cannot both decide one request, two refunds cannot both spend what is left).
    ``populate_existing`` matters as much: without it a row the session already loaded keeps
    its old values after the lock is granted, and the re-check reads stale state.
    """
    return stmt.with_for_update().execution_options(populate_existing=True)
