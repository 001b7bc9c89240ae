"""Ten thousand broken card tokens: none accepted, none crashes, every refusal audited."""

from __future__ import annotations

import base64

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from tests.engine.conftest import ARJUN, EVERYTHING, SECRET
from tests.engine.toy import TOY_TOOLS
from tools import CardClaims, CardSigner, Registry
from tools.db import AuditRow, Database
from tools.errors import CardError
from tools.toolsets.merchant.scope import tenant_name

EXAMPLES = 2_500  # per strategy; four strategies make 10,000 tokens


def _flip(token: str, part: int, bit: int) -> str:
    """Flips one bit in the decoded bytes of one dot-separated part, then re-encodes it."""
    parts = token.split(".")
    index = part % len(parts)
    raw = bytearray(base64.urlsafe_b64decode(parts[index] + "=" * (-len(parts[index]) % 4)))
    raw[(bit // 8) % len(raw)] ^= 1 << (bit % 8)
    parts[index] = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    return ".".join(parts)


claims_strategy = st.builds(
    CardClaims,
    card_id=st.text(min_size=0, max_size=40),
    tool=st.sampled_from(["rename_branch", "explode", "count_branches", "transfer"]),
    userid=st.integers(min_value=-5, max_value=10),
    tenantid=st.integers(min_value=-1, max_value=3),
    digest=st.text(max_size=50),
)


@pytest.fixture
async def fuzz_registry(db: Database) -> Registry:
    return Registry(db, CardSigner([SECRET]), TOY_TOOLS, tenant_names=tenant_name)


async def _genuine(registry: Registry) -> str:
    result = await registry.call(EVERYTHING, "rename_branch", {"branch_id": 1, "name": "X"}, ARJUN)
    assert result.proposal is not None
    return result.proposal.card


async def _audited_refusals(db: Database) -> int:
    async with db.session() as session:
        stmt = select(func.count()).select_from(AuditRow).where(AuditRow.outcome == "refused")
        return int(await session.scalar(stmt) or 0)


def _generate(genuine: str) -> list[str]:
    """Draws the broken tokens with hypothesis, synchronously, before any is presented."""
    tokens: list[str] = []
    foreign = CardSigner(["a-different-secret-0123456789"])
    common = settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )

    @common
    @given(part=st.integers(0, 2), bit=st.integers(0, 8 * 200))
    def flipped(part: int, bit: int) -> None:
        tokens.append(_flip(genuine, part, bit))

    @common
    @given(start=st.integers(0, len(genuine) - 1), length=st.integers(1, len(genuine)))
    def truncated(start: int, length: int) -> None:
        # Cut short, or with a piece missing from the middle (a copy-paste that lost a bit).
        tokens.append(genuine[:start] + genuine[start + length :])

    @common
    @given(claims=claims_strategy)
    def resigned(claims: CardClaims) -> None:
        tokens.append(foreign.mint(claims))

    junk = st.one_of(
        st.text(max_size=300), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))
    )

    @common
    @given(text=junk)
    def garbage(text: str) -> None:
        tokens.append(text)

    for draw in (flipped, truncated, resigned, garbage):
        draw()
    return tokens


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_ten_thousand_broken_tokens_are_refused_and_audited(
    db: Database, fuzz_registry: Registry
) -> None:
    """Bit flips, truncations, foreign re-signing and garbage: all refused, all audited."""
    registry = fuzz_registry
    genuine = await _genuine(registry)
    tokens = _generate(genuine)
    assert len(tokens) >= 10_000

    for token in tokens:
        with pytest.raises(CardError):
            await registry.approve(EVERYTHING, token, ARJUN)

    assert await _audited_refusals(db) == len(tokens)
    assert (await registry.approve(EVERYTHING, genuine, ARJUN)).ok
