"""Card tokens: mint + verify per second with ``CardSigner``, vs raw HMAC-SHA256 over the same bytes.

The product side mints a token for a card's claims and parses it back (the claims and the
minting time joined into a payload, itsdangerous's ``Signer`` with HMAC-SHA256 and base64 of the
signature, then on the way back the signature checked against every accepted key, the payload
split and its shape and age checked). The baseline takes the exact bytes the product signs (the
token without its signature) and does only ``hmac.new(key, bytes, sha256)`` to sign and
``hmac.compare_digest`` to verify. Where the ratio is far off, a profile of one run says where
the time goes.
"""

from __future__ import annotations

import cProfile
import hashlib
import hmac
import io
import pstats
import time
import uuid
from pathlib import Path

from tqdm import tqdm

from bench.stage import CARD_SECRET
from bench.stats import Figure
from tools import CardClaims, CardSigner
from tools.cards.tokens import args_digest

__all__ = ["profile", "run"]

RUNS = 5
TOKENS = 10_000
_FAR_OFF = 3.0


def _claims(count: int) -> list[CardClaims]:
    digest = args_digest({"branch": 1, "sku": "FF-PANEER-WRAP", "delta": 1, "reason": "count"})
    return [CardClaims(uuid.uuid4().hex, "adjust_stock", 2, 1, digest) for _ in range(count)]


def _product(signer: CardSigner, claims: list[CardClaims]) -> float:
    started = time.perf_counter()
    for claim in claims:
        if signer.parse(signer.mint(claim)) != claim:
            raise RuntimeError("a minted card did not verify")
    return len(claims) / (time.perf_counter() - started)


def _raw(key: bytes, signed: list[bytes]) -> float:
    started = time.perf_counter()
    for value in signed:
        mac = hmac.new(key, value, hashlib.sha256).digest()
        if not hmac.compare_digest(hmac.new(key, value, hashlib.sha256).digest(), mac):
            raise RuntimeError("HMAC did not verify")
    return len(signed) / (time.perf_counter() - started)


def profile(signer: CardSigner, claims: list[CardClaims], top: int = 12) -> str:
    """The functions where minting and verifying spend their time (own time, descending)."""
    profiler = cProfile.Profile()
    profiler.runcall(_product, signer, claims)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()


async def run(workdir: Path, *, runs: int = RUNS, tokens: int = TOKENS) -> list[Figure]:
    signer = CardSigner([CARD_SECRET])
    key = hashlib.sha256(CARD_SECRET.encode()).digest()
    figure = Figure(
        "card token mint + verify",
        "pairs/s",
        "higher",
        target_ratio=_FAR_OFF,
        digits=0,
        note="raw HMAC-SHA256 sign + compare_digest over the same bytes",
    )
    claims = _claims(tokens)
    signed = [signer.mint(claim).rsplit(".", 1)[0].encode() for claim in claims]
    _product(signer, claims[:500])
    for _ in tqdm(range(runs), desc="cards", unit="run", leave=False):
        figure.add(_product(signer, claims), _raw(key, signed))
    ratio = figure.ratio()
    if ratio is not None and ratio.median > _FAR_OFF:
        print(f"\ncard tokens are {ratio.median:.1f}× raw HMAC; where the time goes:\n")
        print(profile(signer, claims[:2000]))
    return [figure]
