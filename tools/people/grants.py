"""Connected agents' grants and tokens: codes for tokens, rotation, verification; never decides a consent.

An allowed consent's code is exchanged once for a grant: one person at one merchant, for one
client, bound to one resource (``/mcp``). The grant's access tokens live at most an hour; its
refresh token is used once and replaced, and an old one presented again (stolen, or replayed)
revokes the whole grant, as does a code presented twice. Only SHA-256 hashes are stored.

A verified access token is a ``Bearer`` exactly as a personal token is: the person decides
who is asking, and nothing else.
"""

from __future__ import annotations

import builtins
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update

from tools.cards.tokens import Clock, utcnow
from tools.db import Database
from tools.errors import AmbiguousError, NotFoundError
from tools.people.consents import CONSENT_TTL, Consent, consent_of, digest
from tools.people.grant_tables import ConsentRow, GrantRow, GrantTokenRow, OAuthClientRow
from tools.people.mcp_tokens import TOUCH_EVERY, Bearer
from tools.people.tables import Person

__all__ = ["ACCESS_TTL", "CODE_TTL", "Grant", "Grants", "Issued"]

ACCESS_TTL = timedelta(hours=1)
REFRESH_TTL = timedelta(days=30)
CODE_TTL = timedelta(minutes=5)
_ACCESS, _REFRESH = "cs_oat_", "cs_ort_"


@dataclass(frozen=True, slots=True)
class Issued:
    """A new access token and its refresh token (their texts, returned once)."""

    access_token: str
    refresh_token: str
    expires_in: int
    grant_id: str


@dataclass(frozen=True, slots=True)
class Grant:
    """A grant as lists show it."""

    id: str
    tenantid: int
    personid: int
    client_id: str
    client_name: str
    resource: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


def _grant(row: GrantRow) -> Grant:
    return Grant(
        row.id, row.tenant_id, row.person_id, row.client_id, row.client_name, row.resource,
        row.created_at, row.revoked_at, row.last_used_at,
    )  # fmt: skip


class Grants:
    """Registers clients, exchanges codes and refresh tokens, verifies and revokes tokens."""

    def __init__(self, db: Database, *, clock: Clock = utcnow) -> None:
        self._db = db
        self._clock = clock

    async def register(self, client_id: str, metadata: dict[str, Any]) -> None:
        async with self._db.session(write=True) as session:
            session.add(
                OAuthClientRow(client_id=client_id, metadata_=metadata, registered_at=self._clock())
            )
            await session.commit()

    async def client(self, client_id: str) -> dict[str, Any] | None:
        async with self._db.session() as session:
            row = await session.get(OAuthClientRow, client_id)
            return dict(row.metadata_) if row is not None else None

    async def code(self, code: str) -> Consent | None:
        """The redeemed consent an authorization code names, or None."""
        stmt = select(ConsentRow).where(ConsentRow.code_hash == digest(code))
        async with self._db.session() as session:
            row = (await session.scalars(stmt)).first()
        if row is None or row.status != "redeemed" or row.person_id is None:
            return None
        if row.created_at + CONSENT_TTL + CODE_TTL <= self._clock():
            return None
        return consent_of(row)

    async def exchange(self, consent: Consent, *, client_name: str) -> Issued | None:
        """The grant a code makes, once; a code used again revokes what it made, and gets None."""
        now = self._clock()
        stmt = (
            update(ConsentRow)
            .where(ConsentRow.id == consent.id, ConsentRow.code_used_at.is_(None))
            .values(code_used_at=now)
        )
        async with self._db.session(write=True) as session:
            first = (await session.execute(stmt)).rowcount  # type: ignore[attr-defined]
            if not first:
                await session.execute(
                    update(GrantRow)
                    .where(GrantRow.consent_id == consent.id, GrantRow.revoked_at.is_(None))
                    .values(revoked_at=now)
                )
                await session.commit()
                return None
            assert consent.tenantid is not None
            assert consent.personid is not None
            grant = GrantRow(
                id=uuid.uuid4().hex,
                tenant_id=consent.tenantid,
                person_id=consent.personid,
                client_id=consent.client_id,
                client_name=client_name[:100],
                resource=consent.resource,
                consent_id=consent.id,
                created_at=now,
            )
            session.add(grant)
            await session.flush()
            issued = self._mint(session, grant.id, now)
            await session.commit()
        return issued

    def _mint(self, session: Any, grant_id: str, now: datetime) -> Issued:
        access = _ACCESS + secrets.token_urlsafe(32)
        refresh = _REFRESH + secrets.token_urlsafe(32)
        for text, kind, ttl in ((access, "access", ACCESS_TTL), (refresh, "refresh", REFRESH_TTL)):
            session.add(
                GrantTokenRow(
                    hash=digest(text),
                    grant_id=grant_id,
                    kind=kind,
                    created_at=now,
                    expires_at=now + ttl,
                )
            )
        return Issued(access, refresh, int(ACCESS_TTL.total_seconds()), grant_id)

    async def _live(self, text: str, kind: str) -> tuple[GrantTokenRow, GrantRow] | None:
        stmt = (
            select(GrantTokenRow, GrantRow)
            .join(GrantRow, GrantRow.id == GrantTokenRow.grant_id)
            .join(
                Person, (Person.id == GrantRow.person_id) & (Person.tenant_id == GrantRow.tenant_id)
            )
            .where(GrantTokenRow.hash == digest(text), GrantTokenRow.kind == kind)
        )
        async with self._db.session() as session:
            found = (await session.execute(stmt)).first()
        if found is None:
            return None
        token, grant = found[0], found[1]
        if grant.revoked_at is not None or token.expires_at <= self._clock():
            return None
        return token, grant

    async def refreshable(self, text: str) -> Grant | None:
        """The live grant a refresh token belongs to (used or not: ``rotate`` tells reuse)."""
        found = await self._live(text, "refresh") if text.startswith(_REFRESH) else None
        return _grant(found[1]) if found else None

    async def rotate(self, text: str) -> Issued | None:
        """New tokens for a refresh token used for the first time; a second use revokes the grant."""
        found = await self._live(text, "refresh")
        if found is None:
            return None
        now = self._clock()
        stmt = (
            update(GrantTokenRow)
            .where(GrantTokenRow.hash == digest(text), GrantTokenRow.used_at.is_(None))
            .values(used_at=now)
        )
        async with self._db.session(write=True) as session:
            if not (await session.execute(stmt)).rowcount:  # type: ignore[attr-defined]
                await session.execute(_revoking(found[1].id, now))
                await session.commit()
                return None
            issued = self._mint(session, found[1].id, now)
            await session.commit()
        return issued

    async def verify(self, text: str, *, resource: str) -> Bearer | None:
        """Who a live access token means at ``resource``; None anywhere else, or once revoked."""
        found = await self._live(text, "access") if text.startswith(_ACCESS) else None
        if found is None or found[1].resource != resource:
            return None
        token, grant = found
        now = self._clock()
        if grant.last_used_at is None or grant.last_used_at <= now - TOUCH_EVERY:
            await self._touch(grant.id, now)
        return Bearer(
            grant.id, grant.tenant_id, grant.person_id, grant.client_name, token.expires_at
        )

    async def _touch(self, grant_id: str, now: datetime) -> None:
        stmt = (
            update(GrantRow)
            .where(
                GrantRow.id == grant_id,
                or_(GrantRow.last_used_at.is_(None), GrantRow.last_used_at <= now - TOUCH_EVERY),
            )
            .values(last_used_at=now)
        )
        async with self._db.session(write=True) as session:
            await session.execute(stmt)
            await session.commit()

    async def grant_of(self, text: str) -> Grant | None:
        """The grant any of its tokens (access or refresh) belongs to, live or not."""
        stmt = (
            select(GrantRow)
            .join(GrantTokenRow, GrantTokenRow.grant_id == GrantRow.id)
            .where(GrantTokenRow.hash == digest(text))
        )
        async with self._db.session() as session:
            row = (await session.scalars(stmt)).first()
        return _grant(row) if row is not None else None

    async def revoke(self, grant_id: str) -> None:
        """Ends a grant: every one of its tokens gets 401 from now on; revoking twice is harmless."""
        async with self._db.session(write=True) as session:
            await session.execute(_revoking(grant_id, self._clock()))
            await session.commit()

    async def named(self, tenantid: int, ref: str) -> Grant:
        """One of this merchant's grants by its id (or the start of it, as lists show it).

        Raises:
            NotFoundError: none of this merchant's grants has that id.
            AmbiguousError: more than one starts so; the error lists them.
        """
        given = ref.strip().lower()
        found = [g for g in await self.list(tenantid) if given and g.id.startswith(given)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotFoundError(f"This merchant has no connected agent {ref.strip()!r}.")
        raise AmbiguousError(
            f"More than one connected agent matches {ref.strip()!r}.",
            [f"{g.id[:8]} ({g.client_name})" for g in found],
        )

    async def list(self, tenantid: int) -> builtins.list[Grant]:
        """This merchant's grants, newest first, revoked ones included."""
        stmt = (
            select(GrantRow)
            .where(GrantRow.tenant_id == tenantid)
            .order_by(GrantRow.created_at.desc(), GrantRow.id)
        )
        async with self._db.session() as session:
            return [_grant(row) for row in (await session.scalars(stmt)).all()]


def _revoking(grant_id: str, now: datetime) -> Any:
    return (
        update(GrantRow)
        .where(GrantRow.id == grant_id, GrantRow.revoked_at.is_(None))
        .values(revoked_at=now)
    )
