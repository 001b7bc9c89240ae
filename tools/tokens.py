"""Mints and verifies the signed approval card; never decides whether a card may run.

A card token is what an Approve button carries. It holds only what identifies the proposal:
the card id, the tool, the person and tenant it was issued to, and a digest of the resolved
arguments. The arguments themselves live in the ``proposals`` table, which keeps the token a
few hundred characters long whatever the arguments (Slack caps a button value at 2,000).

A token is ``c2~card~tool~user~tenant~digest~minted.signature``: itsdangerous's ``Signer``
with HMAC-SHA256 over a plain ``~``-separated payload, the minting time (epoch seconds) in it. The previous format
(a JSON list through ``URLSafeTimedSerializer``, HMAC-SHA1) is still accepted until the cards
minted in it have expired; see ``_LegacyCards``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from base64 import urlsafe_b64encode
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from itsdangerous import BadData, SignatureExpired, Signer, TimestampSigner, URLSafeTimedSerializer
from itsdangerous.encoding import want_bytes
from itsdangerous.signer import HMACAlgorithm

from tools.errors import CardExpiredError, InvalidCardError

__all__ = ["CARD_TTL", "CardClaims", "CardSigner", "Clock", "args_digest", "utcnow"]

CARD_TTL = timedelta(minutes=30)
_SALT = "countersign.card.v1"
# Longer than any token this module mints; a longer string is refused before any parsing.
_MAX_TOKEN = 1000
# Marks the SHA-256 format; a token without it can only be a legacy (SHA-1) card.
_FORMAT = "c2"
_FIELD = "~"
_PREFIX = _FORMAT + _FIELD
_FIELDS = 6  # separators in a payload: format, card, tool, user, tenant, digest, minted

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
        fields = (self.card_id, self.tool, str(self.userid), str(self.tenantid), self.digest)
        payload = _FIELD.join((_FORMAT, *fields, str(minted)))
        if payload.count(_FIELD) != _FIELDS:
            # Card ids are hex, tools identifiers, digests base64url: this is a bug, not input.
            raise ValueError(f"a card field contains {_FIELD!r}: {self!r}")
        return payload.encode()

    @classmethod
    def from_payload(cls, payload: bytes) -> tuple[CardClaims, int]:
        """The claims and when they were minted (seconds since the epoch)."""
        match payload.decode().split(_FIELD):
            case [form, card_id, tool, userid, tenantid, digest, minted] if (
                form == _FORMAT and _digits(userid, tenantid, minted)
            ):
                return cls(card_id, tool, int(userid), int(tenantid), digest), int(minted)
            case _:
                raise InvalidCardError("its contents are not a card")

    @classmethod
    def from_wire(cls, value: Any) -> CardClaims:
        """The claims of a legacy token: the JSON list ``[card, tool, user, tenant, digest]``."""
        match value:
            case [str(card_id), str(tool), int(userid), int(tenantid), str(digest)]:
                return cls(card_id, tool, userid, tenantid, digest)
            case _:
                raise InvalidCardError("its contents are not a card")


def _digits(userid: str, tenantid: str, minted: str) -> bool:
    # ASCII digits only: int() would also take "²", " 7" and "-1".
    digits = userid.isdigit() and tenantid.isdigit() and minted.isdigit()
    return digits and (userid + tenantid + minted).isascii()


class _HmacSha256(HMACAlgorithm):
    """HMAC-SHA256 through ``hmac.digest``, OpenSSL's one-shot call, instead of an HMAC object."""

    def __init__(self) -> None:
        super().__init__(hashlib.sha256)

    def get_signature(self, key: bytes, value: bytes) -> bytes:
        return hmac.digest(key, value, "sha256")


class _Signer(Signer):
    """itsdangerous's signer, HMAC-SHA256, with each key derived once instead of on every call."""

    def __init__(self, secrets: Sequence[str]) -> None:
        # itsdangerous signs with the *last* key of the list and verifies with all of them.
        super().__init__(
            list(reversed(secrets)),
            salt=_SALT,
            digest_method=hashlib.sha256,
            algorithm=_HmacSha256(),
        )
        derive = super().derive_key
        self._derived = {key: derive(key) for key in self.secret_keys}

    def derive_key(self, secret_key: str | bytes | None = None) -> bytes:
        key = self.secret_keys[-1] if secret_key is None else want_bytes(secret_key)
        return self._derived.get(key) or super().derive_key(key)


class CardSigner:
    """Signs cards with the first secret and accepts any of them, so keys rotate without a cutover.

    Built once per process: the signer and its derived keys are reused by every card.

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
        self._signer = _Signer(secrets)
        self._legacy = _LegacyCards(secrets, clock)

    def mint(self, claims: CardClaims) -> str:
        minted = int(self.clock().timestamp())
        return self._signer.sign(claims.to_payload(minted)).decode()

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
        age = int(self.clock().timestamp()) - minted
        if age > self._max_age or age < 0:
            raise CardExpiredError(card_id=claims.card_id)
        return claims


class _LegacyCards:
    """Verifies cards minted before the SHA-256 format: JSON through ``URLSafeTimedSerializer``.

    Those cards were signed with itsdangerous's default, HMAC-SHA1. A card posted just before
    the deploy that switched formats must still work when pressed just after it, so they are
    verified (never minted) until they expire. Remove this class once ``CARD_TTL`` (at most
    seven days, see ``Settings.countersign_card_ttl``) has passed since that deploy.
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
