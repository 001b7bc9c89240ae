"""Finds merchants, people and cards by what a person types; reads only, never changes a row."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.cli.failures import CliError
from tools.db import AuditRow, Database
from tools.toolsets.merchant.models import Person, Tenant

__all__ = ["find_card_id", "find_person", "find_tenant", "person_names", "tenant_names"]

# A card id is 32 hex digits; the audit table shows the first 8.
# The most emails a "no such person" message lists; past this, it says how many more.
_LISTED_PEOPLE = 20
_FULL_CARD_ID = 32
_HEX = frozenset("0123456789abcdef")


async def find_tenant(db: Database, ref: str) -> Tenant:
    """A merchant by id ("1") or by name (exact, or the only one starting so; any case).

    Raises:
        CliError: nothing or more than one merchant matches; the message lists the merchants.
    """
    text = ref.strip()
    async with db.session() as session:
        if text.isdigit():
            found = [t for t in [await session.get(Tenant, int(text))] if t is not None]
        else:
            found = list(await _tenants_named(session, text))
        if len(found) == 1:
            return found[0]
        known = (await session.scalars(select(Tenant).order_by(Tenant.id))).all()
    listing = ", ".join(f"{t.id} ({t.name})" for t in known) or "none yet"
    if not found:
        raise CliError(f"There is no merchant {text!r}. Merchants: {listing}.")
    raise CliError(
        f"{text!r} matches more than one merchant; please use its id. Merchants: {listing}."
    )


async def find_person(db: Database, tenant: Tenant, email: str) -> Person:
    """The person of this merchant with this email (any case).

    Raises:
        CliError: nobody of this merchant has it; the message lists the merchant's emails.
    """
    wanted = email.strip()
    people = select(Person).where(Person.tenant_id == tenant.id).order_by(Person.id)
    async with db.session() as session:
        known = list((await session.scalars(people)).all())
    found = [p for p in known if p.email.lower() == wanted.lower()]
    if found:
        return found[0]
    emails = [p.email for p in known[:_LISTED_PEOPLE]]
    more = len(known) - len(emails)
    listing = ", ".join(emails) + (f" and {more} more" if more else "") or "nobody yet"
    raise CliError(
        f"Nobody with the email {wanted} is set up in {tenant.name}. Its people: {listing}."
    )


async def _tenants_named(session: AsyncSession, name: str) -> list[Tenant]:
    exact = select(Tenant).where(func.lower(Tenant.name) == name.lower())
    found = list((await session.scalars(exact)).all())
    if found:
        return found
    pattern = name.lower().replace("%", r"\%").replace("_", r"\_") + "%"
    prefix = select(Tenant).where(func.lower(Tenant.name).like(pattern, escape="\\")).limit(10)
    return list((await session.scalars(prefix)).all())


async def find_card_id(db: Database, ref: str) -> str:
    """The full card id for a full or shortened one, as the audit table prints it.

    A full id is taken as given (an audit with no entries for it says so). A shortened one must
    begin exactly one card id found in the audit log.

    Raises:
        CliError: a shortened id matches no card or several.
    """
    text = ref.strip().lower()
    if not text or any(c not in _HEX for c in text):
        raise CliError(f"{ref!r} is not a card id; card ids are hexadecimal, like 3f9a1c2e.")
    if len(text) >= _FULL_CARD_ID:
        return text
    stmt = select(AuditRow.card_id).where(AuditRow.card_id.like(text + "%")).distinct().limit(2)
    async with db.session() as session:
        matches = [card for card in (await session.scalars(stmt)).all() if card]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(f"No audit entry mentions a card starting {text!r}; please check the id.")
    raise CliError(f"More than one card starts {text!r}; please give more of the id.")


async def person_names(db: Database, ids: Iterable[int]) -> dict[int, str]:
    """Names of the people with these ids; ids of people who no longer exist are left out."""
    wanted = set(ids)
    if not wanted:
        return {}
    async with db.session() as session:
        rows = await session.execute(select(Person.id, Person.name).where(Person.id.in_(wanted)))
        return {row.id: row.name for row in rows}


async def tenant_names(db: Database, ids: Iterable[int]) -> dict[int, str]:
    """Names of the merchants with these ids."""
    wanted = set(ids)
    if not wanted:
        return {}
    async with db.session() as session:
        rows = await session.execute(select(Tenant.id, Tenant.name).where(Tenant.id.in_(wanted)))
        return {row.id: row.name for row in rows}
