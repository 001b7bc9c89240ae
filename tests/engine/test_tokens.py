"""Card tokens: SHA-256 for new cards, the SHA-1 format still accepted until its cards expire."""

from __future__ import annotations

import hashlib
import hmac
from base64 import urlsafe_b64encode
from datetime import UTC, datetime, timedelta

import pytest
from itsdangerous import Signer, TimestampSigner, URLSafeTimedSerializer

from tests.engine.conftest import ARJUN, EVERYTHING, SECRET
from tests.support.clock import SteppedClock
from tools import CardClaims, CardSigner, Registry
from tools.cards.tokens import BatchClaims
from tools.errors import CardExpiredError, InvalidCardError

CLAIMS = CardClaims("ab" * 16, "rename_branch", 2, 1, "d" * 43)


def _sha1_token(claims: CardClaims, secret: str = SECRET, at: datetime | None = None) -> str:
    """A card exactly as the previous CardSigner minted it: itsdangerous's defaults, SHA-1."""
    minted = int((at or datetime.now(UTC)).timestamp())

    class _At(TimestampSigner):
        def get_timestamp(self) -> int:
            return minted

    wire = [claims.card_id, claims.tool, claims.userid, claims.tenantid, claims.digest]
    token = URLSafeTimedSerializer([secret], salt="countersign.card.v1", signer=_At).dumps(wire)
    assert isinstance(token, str)
    return token


def test_new_cards_are_signed_with_hmac_sha256() -> None:
    """The signature of a new card is HMAC-SHA256 (32 bytes) under the salted, derived key."""
    token = CardSigner([SECRET]).mint(CLAIMS)
    value, signature = token.rsplit(".", 1)
    key = hashlib.sha256(b"countersign.card.v1" + b"signer" + SECRET.encode()).digest()
    expected = hmac.digest(key, value.encode(), "sha256")
    assert signature == urlsafe_b64encode(expected).rstrip(b"=").decode()
    assert len(token) < 1000


def test_card_minted_in_the_sha1_format_still_verifies() -> None:
    """A card posted before the switch to SHA-256 still parses to the same claims."""
    assert CardSigner([SECRET]).parse(_sha1_token(CLAIMS)) == CLAIMS


def test_tampered_sha1_card_is_refused() -> None:
    """A changed character in an old-format card is refused as invalid, as in the new format."""
    token = _sha1_token(CLAIMS)
    flipped = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
    with pytest.raises(InvalidCardError):
        CardSigner([SECRET]).parse(flipped)


def test_sha1_card_signed_with_a_foreign_key_is_refused() -> None:
    """An old-format card signed with a key this server does not hold is refused."""
    with pytest.raises(InvalidCardError):
        CardSigner([SECRET]).parse(_sha1_token(CLAIMS, "someone-else-secret-0123456789"))


def test_sha1_card_expires_like_any_other() -> None:
    """An old-format card past the TTL is expired (naming its card), not accepted forever."""
    clock = SteppedClock()
    token = _sha1_token(CLAIMS, at=clock())
    clock.step(timedelta(minutes=31))
    with pytest.raises(CardExpiredError) as expired:
        CardSigner([SECRET], clock=clock).parse(token)
    assert expired.value.card_id == CLAIMS.card_id


def test_new_card_past_its_ttl_names_the_card() -> None:
    """A new-format card past the TTL is CardExpiredError with its card id."""
    clock = SteppedClock()
    signer = CardSigner([SECRET], ttl=timedelta(minutes=30), clock=clock)
    token = signer.mint(CLAIMS)
    clock.step(timedelta(minutes=30))
    assert signer.parse(token) == CLAIMS
    clock.step(timedelta(seconds=1))
    with pytest.raises(CardExpiredError) as expired:
        signer.parse(token)
    assert expired.value.card_id == CLAIMS.card_id


def test_rotation_accepts_both_formats_signed_with_the_old_key() -> None:
    """After rotation, cards of either format signed with the previous key still verify."""
    old = CardSigner([SECRET]).mint(CLAIMS)
    rotated = CardSigner(["new-secret-0123456789abcdef", SECRET])
    assert rotated.parse(old) == CLAIMS
    assert rotated.parse(_sha1_token(CLAIMS)) == CLAIMS
    with pytest.raises(InvalidCardError):
        CardSigner([SECRET]).parse(rotated.mint(CLAIMS))


def test_signatures_are_itsdangerous_signers_own() -> None:
    """A card verifies with a stock itsdangerous Signer (SHA-256), and one it signs with the
    current or the previous key verifies here; a changed signature is refused."""
    old, new = SECRET, "new-secret-0123456789abcdef"
    salt, sha256 = "countersign.card.v1", hashlib.sha256
    stock = Signer([old, new], salt=salt, digest_method=sha256)  # signs with the last key
    rotated = CardSigner([new, old])
    for ours in (rotated, CardSigner([old])):
        assert stock.validate(ours.mint(CLAIMS))
    value = rotated.mint(CLAIMS).rsplit(".", 1)[0]
    for key in (new, old):
        signed = Signer(key, salt=salt, digest_method=sha256).sign(value).decode()
        assert rotated.parse(signed) == CLAIMS
        bad = signed[:-2] + ("AA" if signed[-2:] != "AA" else "BB")
        with pytest.raises(InvalidCardError):
            rotated.parse(bad)


@pytest.mark.parametrize(
    "payload",
    [
        b"c2~x",
        b"c2~a~b~1~2~d~3~extra",
        b"c2~a~b~-1~2~d~3",
        b"c2~a~b~\xc2\xb2~2~d~3",
        b"c2~a~b~1~2~d~",
    ],
)
def test_correctly_signed_nonsense_is_refused(payload: bytes) -> None:
    """A payload with the right signature but not the shape of a card is refused, not a crash."""
    signer = CardSigner([SECRET])
    token = signer._signer.sign(payload).decode()
    with pytest.raises(InvalidCardError):
        signer.parse(token)


async def test_sha1_card_approves_end_to_end(signer: CardSigner, registry: Registry) -> None:
    """A card proposed just before the deploy, pressed just after it, runs."""
    proposal = (
        await registry.call(EVERYTHING, "rename_branch", {"branch_id": 1, "name": "Old"}, ARJUN)
    ).proposal
    assert proposal is not None
    legacy = _sha1_token(signer.parse(proposal.card), at=registry.now())
    decision = await registry.approve(EVERYTHING, legacy, ARJUN)
    assert decision.ok


# A card and a batch exactly as this server mints them for SECRET at 2026-12-01 09:00 UTC: a
# change to the format or the signature that would refuse the buttons already posted fails here.
_MINTED_AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
_POSTED_CARD = (
    "YzJ-YWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJhYmFiYWJ-cmVuYW1lX2JyYW5jaH4yfjF-ZGRkZGRkZGRkZGRkZGRk"
    "ZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZGRkZH4xNzk2MTE1NjAw.uXah2kpzXor5sX5WlbAss_BoaJkt0zVWpCa7jKjklbc"
)
_POSTED_BATCH = (
    "YjJ-Y2RjZGNkY2RjZGNkY2RjZGNkY2RjZGNkY2RjZGNkY2R-Mn4xfmVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVl"
    "ZWVlZWVlZWVlZWVlZWV-MTc5NjExNTYwMA.Shkq7xf3QfzQynAyLyNDCgwTErYwi5jWeyeKAiNRleQ"
)
_BATCH = BatchClaims("cd" * 16, 2, 1, "e" * 43)


def test_a_posted_card_and_batch_keep_verifying_and_are_minted_byte_for_byte() -> None:
    """Buttons already posted verify to their claims, and the same claims mint the same token."""
    clock = SteppedClock(_MINTED_AT + timedelta(minutes=5))
    signer = CardSigner([SECRET], clock=clock)
    assert signer.parse(_POSTED_CARD) == CLAIMS
    assert signer.parse_batch(_POSTED_BATCH) == (_BATCH, False)
    clock.now = _MINTED_AT
    assert (signer.mint(CLAIMS), signer.mint_batch(_BATCH)) == (_POSTED_CARD, _POSTED_BATCH)
