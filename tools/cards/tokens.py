"""Mints and verifies the signed approval card; never decides whether a card may run.

A card token is what an Approve button carries. It holds only what identifies the proposal:
the card id, the tool, the person and tenant it was issued to, and a digest of the resolved
arguments. The arguments themselves live in the ``proposals`` table, which keeps the token a
few hundred characters long whatever the arguments (Slack caps a button value at 2,000).

A token is ``base64(c2~card~tool~user~tenant~digest~minted).signature``: HMAC-SHA256 over a
``~``-separated payload, byte for byte what itsdangerous's ``Signer`` makes with SHA-256 (its
salted key derivation, every key tried when verifying), so either verifies the other's. The minting time (epoch seconds) sits inside the payload rather than in
``TimestampSigner``'s suffix, so one pattern reads back everything a token says; there is no
JSON or compression, which keeps the token short. Cards in the SHA-1 format (a JSON list through
``URLSafeTimedSerializer``) are verified, never minted, until they expire; see ``_LegacyCards``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from base64 import urlsafe_b64encode
from binascii import Error as BinasciiError
from binascii import a2b_base64, b2a_base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from itsdangerous import (
    BadData,
    SignatureExpired,
    TimestampSigner,
    URLSafeTimedSerializer,
)

from tools.errors import CardExpiredError, InvalidCardError

__all__ = [
    "CARD_TTL",
    "BatchClaims",
    "CardClaims",
    "CardSigner",
    "Clock",
    "args_digest",
    "is_batch_token",
    "utcnow",
]

CARD_TTL = timedelta(minutes=30)
_SALT = "countersign.card.v1"
# Longer than any token this module mints; a longer string is refused before any parsing.
_MAX_TOKEN = 1000
# Marks the SHA-256 format; a token without it can only be a legacy (SHA-1) card.
_FORMAT = "c2"
_FIELD = "~"
# Every payload starts "c2~", whose base64 is exactly these four characters; a legacy token's
# base64 JSON starts "Wy" (or "." when compressed).
_PREFIX = urlsafe_b64encode(f"{_FORMAT}{_FIELD}".encode()).decode()
_SEPARATORS = 6  # format, card, tool, user, tenant, digest, minted
# Integers in their one canonical form only: not "²", " 7", "+7" or "07" (ASCII digits, no
# leading zero, "-" only before a non-zero number). One match reads the whole payload.
_INTEGER = r"(0|-?[1-9][0-9]*)"
_PAYLOAD = re.compile(
    rf"{_FORMAT}{_FIELD}([^{_FIELD}]*){_FIELD}([^{_FIELD}]*){_FIELD}{_INTEGER}{_FIELD}{_INTEGER}"
    rf"{_FIELD}([^{_FIELD}]*){_FIELD}{_INTEGER}",
    re.ASCII,
)
_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")


def _urlsafe(raw: bytes) -> bytes:
    """Unpadded base64url, as itsdangerous writes it."""
    return b2a_base64(raw, newline=False).translate(_TO_URLSAFE).rstrip(b"=")


def _plain(payload: bytes) -> str:
    """The text of an unpadded base64url payload (surplus padding is ignored)."""
    return a2b_base64(payload.translate(_FROM_URLSAFE) + b"==").decode()


Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def args_digest(args: Mapping[str, Any]) -> str:
    """A stable digest of resolved arguments in their JSON form (key order does not matter)."""
    blob = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    raw = hashlib.sha256(blob.encode()).digest()
    return urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass(frozen=True, slots=True)
class CardClaims:
    """What a verified token says: which proposal, for whom, and a digest of what it runs."""

    card_id: str
    tool: str
    userid: int
    tenantid: int
    digest: str

    def to_payload(self, minted: int) -> bytes:
        """The signed value: the fields and the minting time, ``~``-joined, in URL-safe base64."""
        # _FORMAT and _FIELD spelled out: one f-string costs a third of joining a tuple.
        plain = (
            f"c2~{self.card_id}~{self.tool}~{self.userid}~{self.tenantid}~{self.digest}~{minted}"
        )
        if plain.count(_FIELD) != _SEPARATORS or "%" in plain:
            # Card ids are hex, tools identifiers and digests base64url, so this never happens
            # to a real card; it keeps a "~" in any field from being read back as a separator.
            fields = (self.card_id, self.tool, str(self.userid), str(self.tenantid), self.digest)
            plain = _FIELD.join((_FORMAT, *map(_escape, fields), str(minted)))
        return _urlsafe(plain.encode())

    @classmethod
    def from_payload(cls, payload: bytes) -> tuple[CardClaims, int]:
        """The claims and when they were minted (seconds since the epoch)."""
        plain = _plain(payload)
        fields = _PAYLOAD.fullmatch(plain)
        if fields is None:
            raise InvalidCardError("its contents are not a card")
        card_id, tool, userid, tenantid, digest, minted = fields.groups()
        if "%" in plain:
            card_id, tool, digest = map(_unescape, (card_id, tool, digest))
        return cls(card_id, tool, int(userid), int(tenantid), digest), int(minted)

    @classmethod
    def from_wire(cls, value: Any) -> CardClaims:
        """The claims of a legacy token: the JSON list ``[card, tool, user, tenant, digest]``."""
        match value:
            case [str(card_id), str(tool), int(userid), int(tenantid), str(digest)]:
                return cls(card_id, tool, userid, tenantid, digest)
            case _:
                raise InvalidCardError("its contents are not a card")


# A batch token (one Approve for several cards): its own format marker, so a batch token is
# never read as a card's nor a card's as a batch's, whatever the fields hold.
_BATCH_FORMAT = "b2"
_BATCH_PREFIX = urlsafe_b64encode(f"{_BATCH_FORMAT}{_FIELD}".encode()).decode()
_BATCH_PAYLOAD = re.compile(
    rf"{_BATCH_FORMAT}{_FIELD}([^{_FIELD}]*){_FIELD}{_INTEGER}{_FIELD}{_INTEGER}"
    rf"{_FIELD}([^{_FIELD}]*){_FIELD}{_INTEGER}",
    re.ASCII,
)


def is_batch_token(token: object) -> bool:
    """Whether a button carries a batch's token (it is verified only by ``parse_batch``)."""
    return isinstance(token, str) and token.startswith(_BATCH_PREFIX)


@dataclass(frozen=True, slots=True)
class BatchClaims:
    """What a verified batch token says: which batch, whose, and a digest of its items (each
    item's card id and its own arguments' digest), so no card joins or leaves it unseen."""

    batch_id: str
    userid: int
    tenantid: int
    digest: str

    def to_payload(self, minted: int) -> bytes:
        fields = (self.batch_id, str(self.userid), str(self.tenantid), self.digest, str(minted))
        if any(_FIELD in f or "%" in f for f in fields):
            raise ValueError("a batch id or digest holds a separator")  # hex and base64url never do
        plain = _FIELD.join((_BATCH_FORMAT, *fields))
        return _urlsafe(plain.encode())

    @classmethod
    def from_payload(cls, payload: bytes) -> tuple[BatchClaims, int]:
        plain = _plain(payload)
        fields = _BATCH_PAYLOAD.fullmatch(plain)
        if fields is None:
            raise InvalidCardError("its contents are not a card")
        batch_id, userid, tenantid, digest, minted = fields.groups()
        return cls(batch_id, int(userid), int(tenantid), digest), int(minted)


def _escape(field: str) -> str:
    return field.replace("%", "%25").replace(_FIELD, "%7E")


def _unescape(field: str) -> str:
    return field.replace("%7E", _FIELD).replace("%25", "%")


class _Hmac:
    """Signs and verifies with HMAC-SHA256 under each secret's derived key; the first secret signs.

    Written with ``hmac`` rather than through itsdangerous's ``Signer``: ``Signer`` derives the
    key and keys HMAC again on every card and passes bytes through several layers, so a mint and
    a verify cost 1.4 times as much (11.8 µs against 8.5) and ``bench card_tokens`` misses its
    target of 3× raw HMAC (4.5× through ``Signer``, 2.8–3.3× this way, on one loaded machine). Each
    key's HMAC is keyed once per process and copied per card.
    """

    def __init__(self, secrets: Sequence[str]) -> None:
        # itsdangerous's default derivation ("django-concat"): SHA-256 of salt, "signer", secret.
        keyed = [
            hmac.new(
                hashlib.sha256(f"{_SALT}signer{secret}".encode()).digest(), digestmod=hashlib.sha256
            )
            for secret in secrets
        ]
        self._signing, self._verifying = keyed[0], tuple(keyed)

    def sign(self, value: bytes) -> bytes:
        """``value.signature``, the signature unpadded base64url, as itsdangerous writes it."""
        mac = self._signing.copy()
        mac.update(value)
        return value + b"." + _urlsafe(mac.digest())

    def unsign(self, token: str) -> bytes:
        """The signed value of a token one of the secrets signed; ValueError for any other."""
        value, _, signature = token.encode().rpartition(b".")
        try:  # as itsdangerous's base64_decode: URL-safe alphabet, padding restored
            mac = a2b_base64(signature.translate(_FROM_URLSAFE) + b"=" * (-len(signature) % 4))
        except BinasciiError as bad:
            raise ValueError("the signature does not match") from bad
        for keyed in self._verifying:
            check = keyed.copy()
            check.update(value)
            if hmac.compare_digest(mac, check.digest()):
                return value
        raise ValueError("the signature does not match")


class CardSigner:
    """Signs cards with the first secret and accepts any of them, so keys rotate without a cutover.

    Built once per process, with each key's HMAC keyed once for every card.

    Args:
        secrets: current secret first, then older ones still accepted.
        ttl: how long a card may wait for a decision.
        clock: the time source; tests step it past the TTL.
    """

    def __init__(
        self, secrets: Sequence[str], *, ttl: timedelta = CARD_TTL, clock: Clock = utcnow
    ) -> None:
        if not secrets or not all(secrets):
            raise ValueError("at least one non-empty card secret is required")
        self.ttl = ttl
        self.clock = clock
        self._max_age = int(ttl.total_seconds())
        self._signer = _Hmac(secrets)
        self._legacy = _LegacyCards(secrets, clock)

    def _now(self) -> int:
        """Seconds since the epoch by ``clock``; the system clock read directly when that is it
        (the same value, without building a datetime twice per card)."""
        if self.clock is utcnow:
            return int(time.time())
        return int(self.clock().timestamp())

    def mint(self, claims: CardClaims) -> str:
        return self._signer.sign(claims.to_payload(self._now())).decode()

    def parse(self, token: str) -> CardClaims:
        """Verifies a token; every way it can be wrong is a refusal, never a crash."""
        if not isinstance(token, str) or not token or len(token) > _MAX_TOKEN:
            raise InvalidCardError("it is empty or too long")
        if not token.startswith(_PREFIX):
            return self._legacy.parse(token, self._max_age)
        try:
            claims, minted = CardClaims.from_payload(self._signer.unsign(token))
        except (BadData, UnicodeError, ValueError) as bad:
            raise InvalidCardError("the signature does not match") from bad
        # As itsdangerous's TimestampSigner decides: older than the TTL, or minted "later" than
        # now by this process's clock, is expired.
        age = self._now() - minted
        if age > self._max_age or age < 0:
            raise CardExpiredError(card_id=claims.card_id)
        return claims

    def mint_batch(self, claims: BatchClaims) -> str:
        """A batch's one token: the same key, salt and HMAC-SHA256 as a card's, another format."""
        return self._signer.sign(claims.to_payload(int(self.clock().timestamp()))).decode()

    def parse_batch(self, token: str) -> tuple[BatchClaims, bool]:
        """Verifies a batch token: its claims, and whether its time ran out (the claims of an
        expired batch are still returned, so its cards can be shown expired)."""
        if not is_batch_token(token) or len(token) > _MAX_TOKEN:
            raise InvalidCardError("it is empty or too long")
        try:
            claims, minted = BatchClaims.from_payload(self._signer.unsign(token))
        except (BadData, UnicodeError, ValueError) as bad:
            raise InvalidCardError("the signature does not match") from bad
        age = int(self.clock().timestamp()) - minted
        return claims, age > self._max_age or age < 0


# Every SHA-1 card has expired once the longest CARD_TTL (seven days) has passed since the
# release that began minting SHA-256 cards (2026-11-30): this class and its tests can go then.
class _LegacyCards:
    """Verifies cards in the SHA-1 format, JSON through ``URLSafeTimedSerializer``; never mints one.

    Such a card is signed with itsdangerous's default, HMAC-SHA1, and refused once ``CARD_TTL``
    (at most seven days, ``Settings.countersign_card_ttl``) has passed since it was minted.
    """

    def __init__(self, secrets: Sequence[str], clock: Clock) -> None:
        clock_ref = clock

        class _ClockSigner(TimestampSigner):
            def get_timestamp(self) -> int:
                return int(clock_ref().timestamp())

        self._serializer = URLSafeTimedSerializer(
            list(reversed(secrets)), salt=_SALT, signer=_ClockSigner
        )

    def parse(self, token: str, max_age: int) -> CardClaims:
        try:
            value = self._serializer.loads(token, max_age=max_age)
        except SignatureExpired as expired:
            claims = self._claims_or_none(expired.payload)
            raise CardExpiredError(card_id=claims.card_id if claims else None) from expired
        except (BadData, UnicodeError, ValueError) as bad:
            raise InvalidCardError("the signature does not match") from bad
        return CardClaims.from_wire(value)

    def _claims_or_none(self, payload: Any) -> CardClaims | None:
        try:
            return CardClaims.from_wire(self._serializer.load_payload(payload))
        except (BadData, InvalidCardError):
            return None
