"""Which merchant each chat installation belongs to; never infers it from anything but a connection.

A merchant connects its installations explicitly: a Slack workspace or Enterprise Grid org (by
team or enterprise id) or a Microsoft Entra tenant (by tenant id), from the command line, or
by redeeming a one-time install code its owner handed out. An installation nobody connected
reaches no merchant at all: an email match alone would let a user of another workspace sharing
a Slack Connect channel claim the owner's email and approve the owner's card.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError

from tools.cards.tokens import Clock, utcnow
from tools.db import ConnectionRow, Database, InviteRow
from tools.errors import ConflictError, NotFoundError

__all__ = ["INVITE_TTL", "Connection", "Connections", "Platform"]

INVITE_TTL = timedelta(days=7)


class Platform(StrEnum):
    SLACK = "slack"
    TEAMS = "teams"


_KIND = {Platform.SLACK: "Slack workspace", Platform.TEAMS: "Microsoft Teams tenant"}


@dataclass(frozen=True, slots=True)
class Connection:
    """One connected installation and the merchant it belongs to."""

    platform: Platform
    installation: str
    tenantid: int
    connected_at: datetime
    audit_channel: str | None = None

    @property
    def described(self) -> str:
        return f"{_KIND[self.platform]} {self.installation}"


def _connection(row: ConnectionRow) -> Connection:
    return Connection(
        Platform(row.platform), row.installation, row.tenant_id, row.connected_at, row.audit_channel
    )


def _digest(code: str) -> str:
    return hashlib.sha256(code.strip().encode()).hexdigest()


class Connections:
    """Connects, disconnects and looks up installations; the table is the only source of truth."""

    def __init__(self, db: Database, *, clock: Clock = utcnow) -> None:
        self._db = db
        self._clock = clock

    async def tenant_of(self, platform: str, installation: str) -> int | None:
        """The merchant this installation is connected to, or None when it is not connected."""
        stmt = select(ConnectionRow.tenant_id).where(
            ConnectionRow.platform == platform, ConnectionRow.installation == installation
        )
        async with self._db.session() as session:
            return await session.scalar(stmt)

    async def connect(self, platform: Platform, installation: str, tenantid: int) -> Connection:
        """Connects an installation to a merchant; connecting it again to the same one is harmless.

        Raises:
            ConflictError: the installation already belongs to another merchant.
        """
        installation = installation.strip()
        current = await self._find(platform, installation)
        if current is not None:
            return self._same_or_refuse(current, tenantid)
        row = ConnectionRow(
            platform=str(platform),
            installation=installation,
            tenant_id=tenantid,
            connected_at=self._clock(),
        )
        async with self._db.session(write=True) as session:
            session.add(row)
            try:
                await session.commit()
            except IntegrityError:
                # Two connects raced; whichever won decides, and this one says what it found.
                await session.rollback()
                raced = await self._find(platform, installation)
                assert raced is not None
                return self._same_or_refuse(raced, tenantid)
        return Connection(platform, installation, tenantid, row.connected_at)

    def _same_or_refuse(self, current: Connection, tenantid: int) -> Connection:
        if current.tenantid == tenantid:
            return current
        raise ConflictError(
            f"The {current.described} is already connected to another merchant. "
            f"Disconnect it first: countersign disconnect {current.platform} "
            f"{current.installation}"
        )

    async def disconnect(self, platform: Platform, installation: str) -> Connection:
        """Disconnects an installation: its people reach no merchant data until it is reconnected.

        Raises:
            NotFoundError: the installation is not connected.
        """
        current = await self._find(platform, installation.strip())
        if current is None:
            raise NotFoundError(
                f"The {_KIND[platform]} {installation.strip()} is not connected to any merchant."
            )
        async with self._db.session(write=True) as session:
            await session.execute(
                delete(ConnectionRow).where(
                    ConnectionRow.platform == str(platform),
                    ConnectionRow.installation == current.installation,
                )
            )
            await session.commit()
        return current

    async def set_audit_channel(
        self, platform: Platform, installation: str, channel: str | None
    ) -> Connection:
        """Sets (or with None clears) the channel where this installation's decisions are posted.

        Raises:
            NotFoundError: the installation is not connected.
        """
        stmt = (
            update(ConnectionRow)
            .where(
                ConnectionRow.platform == str(platform),
                ConnectionRow.installation == installation.strip(),
            )
            .values(audit_channel=channel)
        )
        async with self._db.session(write=True) as session:
            result = await session.execute(stmt)
            await session.commit()
        found = await self._find(platform, installation.strip())
        if not getattr(result, "rowcount", 0) or found is None:
            raise NotFoundError(
                f"The {_KIND[platform]} {installation.strip()} is not connected to any merchant."
            )
        return found

    async def connection(self, platform: str, installation: str) -> Connection | None:
        """The connection of this installation (with its audit channel), or None."""
        return await self._find(Platform(platform), installation)

    async def listing(self) -> list[Connection]:
        """Every connection, by merchant then platform then installation."""
        stmt = select(ConnectionRow).order_by(
            ConnectionRow.tenant_id, ConnectionRow.platform, ConnectionRow.installation
        )
        async with self._db.session() as session:
            return [_connection(row) for row in (await session.scalars(stmt)).all()]

    async def invite(self, tenantid: int, *, ttl: timedelta = INVITE_TTL) -> str:
        """A new one-time install code for this merchant; only its digest is stored."""
        code = secrets.token_urlsafe(18)
        now = self._clock()
        async with self._db.session(write=True) as session:
            session.add(
                InviteRow(
                    digest=_digest(code),
                    tenant_id=tenantid,
                    created_at=now,
                    expires_at=now + ttl,
                    used_at=None,
                    used_by=None,
                )
            )
            await session.commit()
        return code

    async def redeem(self, code: str, platform: Platform, installation: str) -> Connection:
        """Connects an installation with an install code; each code works once, before it expires.

        Raises:
            NotFoundError: the code is unknown, expired or already used.
            ConflictError: the installation belongs to another merchant (the code stays unused).
        """
        now = self._clock()
        async with self._db.session() as session:
            invite = await session.get(InviteRow, _digest(code))
        if invite is None or invite.used_at is not None or invite.expires_at <= now:
            raise NotFoundError(
                "This install code is not valid any more (unknown, expired or already used). "
                "Ask the merchant's owner for a new one: countersign invite <merchant>"
            )
        current = await self._find(platform, installation.strip())
        if current is not None:
            self._same_or_refuse(current, invite.tenant_id)
        if not await self._use(invite.digest, now, f"{platform}:{installation.strip()}"):
            raise NotFoundError("This install code was used a moment ago; ask for a new one.")
        return await self.connect(platform, installation, invite.tenant_id)

    async def _use(self, digest: str, now: datetime, by: str) -> bool:
        # One conditional UPDATE: two installs racing with one code connect only one of them.
        stmt = (
            update(InviteRow)
            .where(InviteRow.digest == digest, InviteRow.used_at.is_(None))
            .values(used_at=now, used_by=by[:130])
        )
        async with self._db.session(write=True) as session:
            result = await session.execute(stmt)
            await session.commit()
            return bool(getattr(result, "rowcount", 0))

    async def _find(self, platform: Platform, installation: str) -> Connection | None:
        async with self._db.session() as session:
            row = await session.get(ConnectionRow, (str(platform), installation))
            return _connection(row) if row else None
