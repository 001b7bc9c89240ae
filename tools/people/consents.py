"""An agent's request to connect, from the authorization page to its code; never issues a token.

A consent starts when a client's authorization request reaches the page (``open``). The person
types their work email (``ask``); when it is a linked member of a connected merchant they get
a consent card in their own DM, and the page and the card show the same short code. Their
press (``decide``) allows or denies it, and only their own press counts. An email that is
nobody's gets a decoy code, no card, and the same page: the page never tells whether an email
exists. After ``CONSENT_TTL`` without a press the request is denied.

The buttons carry their own signed value (``ConsentSigner``): a salt of its own, so no consent
value is a card token and no card token is a consent value; it can approve nothing else.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy import update

from tools.audit.log import AuditEntry, AuditLog, Outcome
from tools.caller import Caller
from tools.cards.tokens import Clock, utcnow
from tools.cards.visible import one_line
from tools.db import Database
from tools.people.directory import Directory
from tools.people.grant_tables import ConsentRow

__all__ = [
    "CONSENT_TTL",
    "Consent",
    "ConsentSigner",
    "Consents",
    "Pressed",
    "Verb",
    "consent_of",
    "digest",
]

CONSENT_TTL = timedelta(minutes=10)
CONNECT_TOOL = "connect_agent"
_SALT = "countersign.oauth-consent.v1"
# Letters nobody misreads for another (no 0/O, 1/I/L), in two groups of three.
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
Verb = Literal["allow", "deny"]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _short_code() -> str:
    letters = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(6))
    return f"{letters[:3]}-{letters[3:]}"


@dataclass(frozen=True, slots=True)
class Consent:
    """One authorization request as the page and the card need it."""

    id: str
    client_id: str
    client_name: str
    redirect_uri: str
    state: str | None
    code_challenge: str
    resource: str
    scopes: tuple[str, ...]
    status: str
    short_code: str | None
    tenantid: int | None
    personid: int | None
    created_at: datetime
    code_used_at: datetime | None
    browser: str | None

    def opened_in(self, browser: str) -> bool:
        """Whether ``browser`` (its cookie) is the one that typed the email."""
        return self.browser is not None and hmac.compare_digest(self.browser, digest(browser))

    def expired(self, now: datetime) -> bool:
        return now - self.created_at >= CONSENT_TTL


def consent_of(row: ConsentRow) -> Consent:
    return Consent(
        row.id,
        row.client_id,
        row.client_name,
        row.redirect_uri,
        row.state,
        row.code_challenge,
        row.resource,
        tuple(row.scopes),
        row.status,
        row.short_code,
        row.tenant_id,
        row.person_id,
        row.created_at,
        row.code_used_at,
        row.browser,
    )


@dataclass(frozen=True, slots=True)
class Pressed:
    """What a consent button's signed value says: which consent, whose, which answer."""

    consent_id: str
    personid: int
    verb: Verb


class ConsentSigner:
    """Signs and reads the value a consent button carries (current secret first)."""

    def __init__(self, secrets_: Sequence[str]) -> None:
        self._serializer = URLSafeTimedSerializer(list(secrets_), salt=_SALT)

    def value(self, consent_id: str, personid: int, verb: Verb) -> str:
        return str(self._serializer.dumps([consent_id, personid, verb]))

    def read(self, value: str) -> Pressed | None:
        """The press a value means, or None: forged, foreign (a card's token) or too old."""
        try:
            loaded = self._serializer.loads(value, max_age=int(CONSENT_TTL.total_seconds()))
        except BadData:
            return None
        match loaded:
            case [str() as consent_id, int() as personid, "allow" | "deny" as verb]:
                return Pressed(consent_id, personid, verb)
            case _:
                return None


class Consents:
    """Opens, asks and decides authorization requests; hands each allowed one's code out once."""

    def __init__(self, db: Database, *, clock: Clock = utcnow) -> None:
        self._db = db
        self._clock = clock

    async def open(
        self,
        *,
        client_id: str,
        client_name: str,
        redirect_uri: str,
        state: str | None,
        code_challenge: str,
        resource: str,
        scopes: Sequence[str],
    ) -> str:
        """A new request; returns its handle (the page's address carries it; only its hash is kept)."""
        handle = secrets.token_urlsafe(32)
        row = ConsentRow(
            id=digest(handle),
            client_id=client_id,
            client_name=one_line(client_name, 100) or client_id[:100],
            redirect_uri=redirect_uri,
            state=state,
            code_challenge=code_challenge,
            resource=resource,
            scopes=list(scopes),
            created_at=self._clock(),
            status="new",
        )
        async with self._db.session(write=True) as session:
            session.add(row)
            await session.commit()
        return handle

    async def get(self, handle: str) -> Consent | None:
        return await self._by_id(digest(handle))

    async def _by_id(self, consent_id: str) -> Consent | None:
        async with self._db.session() as session:
            row = await session.get(ConsentRow, consent_id)
            return consent_of(row) if row is not None else None

    async def ask(
        self, handle: str, email: str, directory: Directory, *, browser: str
    ) -> tuple[Consent, Caller | None, list[tuple[str, str, str]]] | None:
        """Records the email's answer, and the browser (its cookie) that gave it: the short
        code, and the person when the email is a
        member linked on a connected installation (with each (platform, installation, user)
        they are reached at); None for a request that is unknown, expired or already asked."""
        consent = await self.get(handle)
        if consent is None or consent.status != "new" or consent.expired(self._clock()):
            return None
        person = await directory.by_email(email) if email.strip() else None
        places: list[tuple[str, str, str]] = []
        if person is not None:
            for platform in ("slack", "teams"):
                found = await directory.addresses(person.userid, platform)
                places += [(platform, inst, user) for inst, user in found]
        known = person if places else None
        values = {
            "status": "asked",
            "short_code": _short_code(),
            "asked_at": self._clock(),
            "browser": digest(browser),
            "tenant_id": known.tenantid if known else None,
            "person_id": known.userid if known else None,
        }
        stmt = (
            update(ConsentRow)
            .where(ConsentRow.id == consent.id, ConsentRow.status == "new")
            .values(**values)
        )
        async with self._db.session(write=True) as session:
            done = (await session.execute(stmt)).rowcount  # type: ignore[attr-defined]
            await session.commit()
        if not done:
            return None
        asked = await self._by_id(consent.id)
        assert asked is not None
        return asked, known, places

    async def decide(self, pressed: Pressed, presser: Caller) -> Consent | None:
        """The press of the person the card was sent to, within its time; None for anyone
        else's press, a late one, or a consent already decided. Audited either way it goes."""
        if presser.userid != pressed.personid:
            return None
        now = self._clock()
        status = "allowed" if pressed.verb == "allow" else "denied"
        stmt = (
            update(ConsentRow)
            .where(
                ConsentRow.id == pressed.consent_id,
                ConsentRow.status == "asked",
                ConsentRow.person_id == presser.userid,
                ConsentRow.created_at > now - CONSENT_TTL,
            )
            .values(status=status, decided_at=now)
        )
        async with self._db.session(write=True) as session:
            done = (await session.execute(stmt)).rowcount  # type: ignore[attr-defined]
            await session.commit()
        consent = await self._by_id(pressed.consent_id)
        if not done or consent is None:
            return None
        await AuditLog(self._db).write(
            AuditEntry(
                at=now,
                agent="oauth",
                tool=CONNECT_TOOL,
                userid=presser.userid,
                tenantid=presser.tenantid,
                scope="-",
                outcome=Outcome.APPROVED if status == "allowed" else Outcome.REJECTED,
                detail=f"{consent.client_name} ({consent.client_id}) {status}, code {consent.short_code}",
                args={"client_id": consent.client_id, "code": consent.short_code},
            )
        )
        return consent

    async def outcome(self, handle: str) -> tuple[Consent, str | None] | None:
        """Where the request stands for the waiting page, with the authorization code the
        first time an allowed one is asked (never again: only its hash is kept)."""
        consent = await self.get(handle)
        if consent is None:
            return None
        now = self._clock()
        if consent.status in ("new", "asked") and consent.expired(now):
            await self._settle(consent.id, consent.status, "denied")
            return await self._again(consent.id), None
        if consent.status != "allowed":
            return consent, None
        code = "cs_oac_" + secrets.token_urlsafe(32)
        if not await self._settle(consent.id, "allowed", "redeemed", code_hash=digest(code)):
            return await self._again(consent.id), None
        return await self._again(consent.id), code

    async def _again(self, consent_id: str) -> Consent:
        found = await self._by_id(consent_id)
        assert found is not None
        return found

    async def _settle(
        self, consent_id: str, was: str, now: str, code_hash: str | None = None
    ) -> bool:
        values: dict[str, object] = {"status": now}
        if code_hash is not None:
            values["code_hash"] = code_hash
        stmt = (
            update(ConsentRow)
            .where(ConsentRow.id == consent_id, ConsentRow.status == was)
            .values(**values)
        )
        async with self._db.session(write=True) as session:
            done = (await session.execute(stmt)).rowcount  # type: ignore[attr-defined]
            await session.commit()
        return bool(done)
