"""Maps a chat identity to a person (a ``Caller``); never guesses who someone is.

Identities are keyed by platform, installation (the workspace or organisation the app is
installed in — never the clicker's own team, which differs in shared channels) and the
platform's user id. A person is linked by a verified email on first contact, or by the CLI,
and only within the merchant the installation is connected to: an identity reaches its
person only while its installation is connected to that person's merchant.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tools.caller import Caller, Role
from tools.cards.tokens import Clock, utcnow
from tools.db import ConnectionRow, Database
from tools.errors import NotFoundError
from tools.people.connections import Connections
from tools.people.tables import Identity, Person, Tenant

__all__ = ["Directory", "identify_on"]


# The two lookups every message makes (``identify``), as Core statements built once: the
# installation's merchant, and the person its identity is linked to through that connection.
_P, _I, _C = Person.__table__.c, Identity.__table__.c, ConnectionRow.__table__.c
_MERCHANT = select(_C.tenant_id).where(
    _C.platform == bindparam("platform"), _C.installation == bindparam("installation")
)
_LINKED = (
    select(_P.id, _P.tenant_id, _P.role, _P.name)
    .join_from(Person.__table__, Identity.__table__, _I.person_id == _P.id)
    .join(
        ConnectionRow.__table__,
        (_C.platform == _I.platform)
        & (_C.installation == _I.installation)
        & (_C.tenant_id == _P.tenant_id),
    )
    .where(
        _I.platform == bindparam("platform"),
        _I.installation == bindparam("installation"),
        _I.platform_user_id == bindparam("user"),
    )
    .limit(1)
)


async def identify_on(
    conn: AsyncConnection, platform: str, installation: str, user_id: str
) -> tuple[int | None, Caller | None]:
    """``Directory.identify`` inside a transaction the caller holds (a turn claims its
    delivery in the same one)."""
    where = {"platform": platform, "installation": installation}
    merchant = (await conn.execute(_MERCHANT, where)).scalar()
    found = (await conn.execute(_LINKED, {**where, "user": user_id})).first()
    if found is None:
        return merchant, None
    caller = Caller(
        userid=found.id, tenantid=found.tenant_id, role=Role(found.role), name=found.name
    )
    return merchant, caller


def _caller(person: Person) -> Caller:
    return Caller(
        userid=person.id, tenantid=person.tenant_id, role=Role(person.role), name=person.name
    )


class Directory:
    """Looks people up by chat identity, email or id, across tenants (it is what picks the tenant)."""

    def __init__(self, db: Database, *, clock: Clock = utcnow) -> None:
        self._db = db
        self._clock = clock
        self.connections = Connections(db, clock=clock)

    async def merchant_of(self, platform: str, installation: str) -> int | None:
        """The merchant an installation is connected to, or None (then it reaches nobody)."""
        return await self.connections.tenant_of(platform, installation)

    async def identify(
        self, platform: str, installation: str, user_id: str
    ) -> tuple[int | None, Caller | None]:
        """``merchant_of`` and ``resolve`` read together, in one transaction.

        Every message a person writes asks both; two transactions per message were a
        measurable share of a burst's database time.
        """
        async with self._db.begin() as conn:
            return await identify_on(conn, platform, installation, user_id)

    async def resolve(self, platform: str, installation: str, user_id: str) -> Caller | None:
        """The person linked to this chat identity, while its installation is connected to
        that person's merchant; None otherwise."""
        stmt = (
            select(Person)
            .join(Identity, Identity.person_id == Person.id)
            .join(
                ConnectionRow,
                (ConnectionRow.platform == Identity.platform)
                & (ConnectionRow.installation == Identity.installation)
                & (ConnectionRow.tenant_id == Person.tenant_id),
            )
            .where(
                Identity.platform == platform,
                Identity.installation == installation,
                Identity.platform_user_id == user_id,
            )
        )
        async with self._db.session() as session:
            person = (await session.scalars(stmt)).first()
            return _caller(person) if person else None

    async def addresses(self, userid: int, platform: str) -> list[tuple[str, str]]:
        """Where a person can be reached on a platform: (installation, platform user id) of
        each identity linked to them through an installation connected to their merchant."""
        stmt = (
            select(Identity.installation, Identity.platform_user_id)
            .join(Person, Identity.person_id == Person.id)
            .join(
                ConnectionRow,
                (ConnectionRow.platform == Identity.platform)
                & (ConnectionRow.installation == Identity.installation)
                & (ConnectionRow.tenant_id == Person.tenant_id),
            )
            .where(Identity.person_id == userid, Identity.platform == platform)
            .order_by(Identity.linked_at)
        )
        async with self._db.session() as session:
            return [(row[0], row[1]) for row in await session.execute(stmt)]

    async def email_of(self, userid: int) -> str | None:
        async with self._db.session() as session:
            person = await session.get(Person, userid)
            return person.email if person else None

    async def time_zone_of(self, platform: str, installation: str) -> str:
        """The zone of the merchant an installation is connected to ("UTC" when none is): what
        a surface that cannot show each reader their own zone shows times in."""
        tenantid = await self.merchant_of(platform, installation)
        if tenantid is None:
            return "UTC"
        async with self._db.session() as session:
            tenant = await session.get(Tenant, tenantid)
            return tenant.time_zone if tenant is not None else "UTC"

    async def merchant_name(self, tenantid: int) -> str | None:
        """The merchant's name as its owner types it in commands, or None when it is gone."""
        async with self._db.session() as session:
            tenant = await session.get(Tenant, tenantid)
            return tenant.name if tenant is not None else None

    async def person(self, userid: int) -> Caller | None:
        async with self._db.session() as session:
            person = await session.get(Person, userid)
            return _caller(person) if person else None

    async def by_email(self, email: str, *, tenantid: int | None = None) -> Caller | None:
        """The person with this email (in this merchant only, when given)."""
        stmt = select(Person).where(func.lower(Person.email) == email.strip().lower())
        if tenantid is not None:
            stmt = stmt.where(Person.tenant_id == tenantid)
        async with self._db.session() as session:
            person = (await session.scalars(stmt)).first()
            return _caller(person) if person else None

    async def link(self, platform: str, installation: str, user_id: str, email: str) -> Caller:
        """Links a chat identity to the person with this email in the installation's merchant.

        Linking again is harmless. An email belongs to a person only in the merchant the
        installation is connected to: otherwise anyone whose profile claimed the owner's
        email, in any workspace, would be linked as the owner.

        Raises:
            NotFoundError: the installation is not connected, or nobody of its merchant has
                that email; the message says what to do.
        """
        tenantid = await self.merchant_of(platform, installation)
        if tenantid is None:
            raise NotFoundError(
                f"The {platform} installation {installation} is not connected to a merchant. "
                f'Connect it first: countersign connect {platform} {installation} "<merchant>"'
            )
        caller = await self.by_email(email, tenantid=tenantid)
        if caller is None:
            raise NotFoundError(
                f"Nobody with the email {email} is set up in the merchant this installation "
                "is connected to. Ask your merchant's owner to add you."
            )
        existing = await self.resolve(platform, installation, user_id)
        if existing is not None and existing.userid == caller.userid:
            return existing
        await self._store(platform, installation, user_id, caller.userid, self._clock())
        return caller

    async def _store(
        self, platform: str, installation: str, user_id: str, person_id: int, now: datetime
    ) -> None:
        async with self._db.session(write=True) as session:
            current = (
                await session.scalars(
                    select(Identity).where(
                        Identity.platform == platform,
                        Identity.installation == installation,
                        Identity.platform_user_id == user_id,
                    )
                )
            ).first()
            if current is not None:
                current.person_id, current.linked_at = person_id, now
            else:
                session.add(
                    Identity(
                        platform=platform,
                        installation=installation,
                        platform_user_id=user_id,
                        person_id=person_id,
                        linked_at=now,
                    )
                )
            try:
                await session.commit()
            except IntegrityError:
                # Two first messages from one person raced; the other insert linked them.
                await session.rollback()
