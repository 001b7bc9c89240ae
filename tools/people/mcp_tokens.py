"""Personal tokens for Countersign's ``/mcp`` endpoint: who an agent is; never what it may do.

A token means one person at one merchant. An agent sending ``Authorization: Bearer <token>``
calls as that person: it sees what their live role sees, and its writes are cards issued by
the merchant's policy like any other. The token decides who is asking and nothing else.

Only the token's SHA-256 is stored (as with install codes), so a copy of the database holds
no token anyone can send. The secret is 256 random bits, so its hash cannot be guessed either:
looking a token up by its hash, on an indexed column, tells an attacker nothing they could
use. Eight characters of the secret (``prefix``) are kept to tell tokens apart in a list.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import secrets
import string
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Row, or_, select, update

from tools.cards.tokens import Clock, utcnow
from tools.db import MCP_TOKENS, Database, McpTokenRow
from tools.errors import AmbiguousError, NotFoundError
from tools.people.tables import Person

__all__ = ["DEFAULT_NAME", "TOKEN_PREFIX", "Bearer", "McpToken", "McpTokens", "TokenState"]

TOKEN_PREFIX = "cs_mcp_"  # noqa: S105 (what every token starts with; not a secret)
DEFAULT_NAME = "MCP token"
_SECRET_BYTES = 32
# ``secrets.token_urlsafe(32)`` is always 43 characters of the URL-safe alphabet.
_SECRET_CHARS = 43
_TOKEN_CHARS = len(TOKEN_PREFIX) + _SECRET_CHARS
_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")
_PREFIX_CHARS = 8
_MAX_NAME = 100
# Every call verifies the token; its last use is written at most this often.
TOUCH_EVERY = timedelta(minutes=1)

TokenState = Literal["active", "expired", "revoked"]


@dataclass(frozen=True, slots=True)
class Bearer:
    """Who a verified token means: the person (by id) at the merchant, and the token's name."""

    token_id: str
    tenantid: int
    personid: int
    name: str
    expires_at: datetime | None


@dataclass(frozen=True, slots=True)
class McpToken:
    """A token as lists show it: never the token itself nor its hash."""

    id: str
    tenantid: int
    personid: int
    name: str
    prefix: str
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None

    @property
    def shown(self) -> str:
        """How a list names the token: its first characters and an ellipsis."""
        return f"{TOKEN_PREFIX}{self.prefix}…"

    def state(self, now: datetime) -> TokenState:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"


def _token(row: McpTokenRow) -> McpToken:
    return McpToken(
        row.id,
        row.tenant_id,
        row.person_id,
        row.name,
        row.prefix,
        row.created_at,
        row.expires_at,
        row.revoked_at,
        row.last_used_at,
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _well_formed(text: str) -> bool:
    """A string of the one shape this module mints; anything else is not worth a query."""
    return (
        len(text) == _TOKEN_CHARS
        and text.startswith(TOKEN_PREFIX)
        and _ALPHABET.issuperset(text[len(TOKEN_PREFIX) :])
    )


def _one_line(name: str) -> str:
    # The name is printed on every card the token's agent asks for, as one line saying which
    # agent asked; a newline in it would draw a line of its own under that one.
    flat = " ".join(name.split()) or DEFAULT_NAME
    if len(flat) > _MAX_NAME:
        raise ValueError(f"a token's name is at most {_MAX_NAME} characters")
    return flat


class McpTokens:
    """Creates, verifies, lists and revokes a merchant's MCP tokens."""

    def __init__(self, db: Database, *, clock: Clock = utcnow) -> None:
        self._db = db
        self._clock = clock

    async def create(
        self,
        tenantid: int,
        personid: int,
        name: str = DEFAULT_NAME,
        expires: timedelta | None = None,
    ) -> tuple[str, McpToken]:
        """A new token for a person of this merchant, and the token's row as lists show it.

        The token text is returned here once and never stored.

        Raises:
            NotFoundError: no person with this id belongs to this merchant.
            ValueError: the name is over 100 characters, or ``expires`` is not positive.
        """
        if expires is not None and expires <= timedelta(0):
            raise ValueError("a token's expiry must be in the future")
        await self._check_person(tenantid, personid)
        secret = secrets.token_urlsafe(_SECRET_BYTES)
        text = TOKEN_PREFIX + secret
        now = self._clock()
        row = McpTokenRow(
            id=uuid.uuid4().hex,
            tenant_id=tenantid,
            person_id=personid,
            name=_one_line(name),
            hash=_digest(text),
            prefix=secret[:_PREFIX_CHARS],
            created_at=now,
            expires_at=None if expires is None else now + expires,
            revoked_at=None,
            last_used_at=None,
        )
        async with self._db.session(write=True) as session:
            session.add(row)
            await session.commit()
        return text, _token(row)

    async def _check_person(self, tenantid: int, personid: int) -> None:
        stmt = select(Person.id).where(Person.id == personid, Person.tenant_id == tenantid)
        async with self._db.session() as session:
            if await session.scalar(stmt) is None:
                raise NotFoundError(f"Merchant {tenantid} has no person with id {personid}.")

    async def verify(self, token_text: str) -> Bearer | None:
        """Who this token means, or None: unknown, malformed, revoked or expired tokens, and
        tokens whose person no longer belongs to the token's merchant, mean nobody."""
        text = token_text.strip()
        if not _well_formed(text):
            return None
        digest = _digest(text)
        found = await self._lookup(digest)
        # The lookup by hash already matched; comparing again in constant time keeps the
        # decision itself free of any timing that depends on the stored value.
        if found is None or not hmac.compare_digest(found.hash, digest):
            return None
        now = self._clock()
        if found.revoked_at is not None or (
            found.expires_at is not None and found.expires_at <= now
        ):
            return None
        if found.last_used_at is None or found.last_used_at <= now - TOUCH_EVERY:
            await self._touch(found.id, now)
        return Bearer(found.id, found.tenant_id, found.person_id, found.name, found.expires_at)

    async def _lookup(self, digest: str) -> Row[Any] | None:
        columns = MCP_TOKENS.c
        stmt = (
            select(MCP_TOKENS)
            # A person moved to another merchant, or removed, is not the caller any more.
            .join(
                Person,
                (Person.id == columns.person_id) & (Person.tenant_id == columns.tenant_id),
            )
            .where(columns.hash == digest)
        )
        async with self._db.begin() as conn:
            return (await conn.execute(stmt)).first()

    async def _touch(self, token_id: str, now: datetime) -> None:
        # Conditional, so processes verifying the same token at once write it once a minute.
        columns = MCP_TOKENS.c
        stmt = (
            update(MCP_TOKENS)
            .where(
                columns.id == token_id,
                or_(columns.last_used_at.is_(None), columns.last_used_at <= now - TOUCH_EVERY),
            )
            .values(last_used_at=now)
        )
        async with self._db.begin(write=True) as conn:
            await conn.execute(stmt)

    async def list(self, tenantid: int) -> builtins.list[McpToken]:
        """This merchant's tokens, newest first, revoked and expired ones included."""
        stmt = (
            select(McpTokenRow)
            .where(McpTokenRow.tenant_id == tenantid)
            .order_by(McpTokenRow.created_at.desc(), McpTokenRow.id)
        )
        async with self._db.session() as session:
            return [_token(row) for row in (await session.scalars(stmt)).all()]

    async def revoke(self, tenantid: int, token_id_or_prefix: str) -> McpToken:
        """Revokes one of this merchant's tokens, named by its id (or the start of it) or by its
        prefix as lists show it; revoking a revoked token is harmless.

        Raises:
            NotFoundError: none of this merchant's tokens is named so.
            AmbiguousError: more than one is; the error lists them.
        """
        token = self._one(token_id_or_prefix, await self.list(tenantid))
        stmt = (
            update(McpTokenRow)
            .where(McpTokenRow.id == token.id, McpTokenRow.revoked_at.is_(None))
            .values(revoked_at=self._clock())
        )
        async with self._db.session(write=True) as session:
            await session.execute(stmt)
            await session.commit()
            row = await session.get(McpTokenRow, token.id, populate_existing=True)
        assert row is not None
        return _token(row)

    @staticmethod
    def _one(ref: str, tokens: builtins.list[McpToken]) -> McpToken:
        given = ref.strip().removeprefix(TOKEN_PREFIX).removesuffix("…").removesuffix("...")
        lowered = given.lower()
        found = [t for t in tokens if given and (t.id.startswith(lowered) or t.prefix == given)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotFoundError(
                f"This merchant has no MCP token {ref.strip()!r}. Give the id or the token's "
                "first characters as countersign mcp-token list shows them."
            )
        raise AmbiguousError(
            f"More than one MCP token matches {ref.strip()!r}.",
            [f"{t.id[:8]} ({t.shown}, {t.name})" for t in found],
        )
