"""Mints and verifies the signed approval card; never decides whether a card may run.

A card token is what an Approve button carries. It holds only what identifies the proposal:
the card id, the tool, the person and tenant it was issued to, and a digest of the resolved
arguments. The arguments themselves live in the ``proposals`` table, which keeps the token a
few hundred characters long whatever the arguments (Slack caps a button value at 2,000).
"""

from __future__ import annotations

import hashlib
import json
from base64 import urlsafe_b64encode
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from itsdangerous import BadData, SignatureExpired, TimestampSigner, URLSafeTimedSerializer

from tools.errors import CardExpiredError, InvalidCardError

__all__ = ["CARD_TTL", "CardClaims", "CardSigner", "Clock", "args_digest", "utcnow"]

CARD_TTL = timedelta(minutes=30)
_SALT = "countersign.card.v1"
# Longer than any token this module mints; a longer string is refused before any parsing.
_MAX_TOKEN = 1000

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

    def to_wire(self) -> list[Any]:
        return [self.card_id, self.tool, self.userid, self.tenantid, self.digest]

    @classmethod
    def from_wire(cls, value: Any) -> CardClaims:
        match value:
            case [str(card_id), str(tool), int(userid), int(tenantid), str(digest)]:
                return cls(card_id, tool, userid, tenantid, digest)
            case _:
                raise InvalidCardError("its contents are not a card")


class CardSigner:
    """Signs cards with the first secret and accepts any of them, so keys rotate without a cutover.

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
        clock_ref = clock

        class _ClockSigner(TimestampSigner):
            def get_timestamp(self) -> int:
                return int(clock_ref().timestamp())

        # itsdangerous signs with the *last* key of the list and verifies with all of them.
        self._serializer = URLSafeTimedSerializer(
            list(reversed(secrets)), salt=_SALT, signer=_ClockSigner
        )

    def mint(self, claims: CardClaims) -> str:
        token = self._serializer.dumps(claims.to_wire())
        assert isinstance(token, str)
        return token

    def parse(self, token: str) -> CardClaims:
        """Verifies a token; every way it can be wrong is a refusal, never a crash."""
        if not isinstance(token, str) or not token or len(token) > _MAX_TOKEN:
            raise InvalidCardError("it is empty or too long")
        try:
            value = self._serializer.loads(token, max_age=int(self.ttl.total_seconds()))
        except SignatureExpired as expired:
            claims = _claims_or_none(expired.payload, self._serializer)
            raise CardExpiredError(card_id=claims.card_id if claims else None) from expired
        except (BadData, UnicodeError, ValueError) as bad:
            raise InvalidCardError("the signature does not match") from bad
        return CardClaims.from_wire(value)


def _claims_or_none(payload: Any, serializer: URLSafeTimedSerializer) -> CardClaims | None:
    """Reads the claims of a correctly signed but expired token, to say which card expired."""
    try:
        return CardClaims.from_wire(serializer.load_payload(payload))
    except (BadData, InvalidCardError):
        return None
