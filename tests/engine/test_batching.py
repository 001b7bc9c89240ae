"""Batches in the engine: who may be bundled, at most twenty, and one token that is only a batch's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import update

from tests.engine.conftest import ARJUN, MEERA, SECRET
from tests.support.clock import SteppedClock
from tools import MAX_ITEMS, CardSigner, Registry
from tools.db import PROPOSALS, Database
from tools.errors import ConflictError, InvalidCardError
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry


@pytest.fixture
def merchant(db: Database, clock: SteppedClock) -> Registry:
    signer = CardSigner([SECRET], ttl=timedelta(minutes=30), clock=clock)
    return build_registry(db, signer, clock=clock)


async def _cards(registry: Registry, *requests: int) -> list[tuple[str, str]]:
    """Arjun proposes approving each request; each card's id and its own token."""
    found = []
    for number in requests:
        result = await registry.call(
            DEFAULT_AGENT, "approve_request", {"request_id": number}, ARJUN
        )
        assert result.proposal is not None
        found.append((result.proposal.card_id, result.proposal.card))
    return found


async def test_a_batch_holds_at_most_twenty_cards(merchant: Registry) -> None:
    """A 21st card is never bundled: the core gives it a card of its own."""
    ids = [f"{n:032x}" for n in range(MAX_ITEMS + 1)]
    with pytest.raises(ConflictError, match="2 to 20"):
        await merchant.batches.bundle(ARJUN, ids)


async def test_a_card_joins_one_batch_and_only_its_askers(merchant: Registry) -> None:
    """A card already bundled, or someone else's, makes the whole bundle fail; nothing moves."""
    (one, _), (two, _), (three, _) = await _cards(merchant, 1, 2, 3)
    made = await merchant.batches.bundle(ARJUN, [one, two])
    assert len(made.token) < 2000 and made.token.count(".") == 1
    with pytest.raises(ConflictError):
        await merchant.batches.bundle(ARJUN, [two, three])
    with pytest.raises(ConflictError):
        await merchant.batches.bundle(MEERA, [three, one])
    record = await merchant.card(three)
    assert record is not None and record.batch_id is None


async def test_card_and_batch_tokens_are_not_interchangeable(merchant: Registry) -> None:
    """A batch's token is refused as a card's, and a card's as a batch's."""
    (one, token), (two, _) = await _cards(merchant, 1, 2)
    made = await merchant.batches.bundle(ARJUN, [one, two])
    with pytest.raises(InvalidCardError):
        await merchant.approve(DEFAULT_AGENT, made.token, ARJUN)
    with pytest.raises(InvalidCardError):
        await merchant.batches.approve(DEFAULT_AGENT, token, ARJUN)


async def test_a_batch_token_is_bound_to_its_cards_arguments(
    merchant: Registry, db: Database
) -> None:
    """A card whose stored digest changed after bundling makes the batch token invalid, so
    what the approver saw is what runs."""
    (one, _), (two, _) = await _cards(merchant, 1, 2)
    made = await merchant.batches.bundle(ARJUN, [one, two])
    async with db.begin() as conn:
        await conn.execute(update(PROPOSALS).where(PROPOSALS.c.id == two).values(digest="x"))
    with pytest.raises(InvalidCardError):
        await merchant.batches.approve(DEFAULT_AGENT, made.token, ARJUN)
    record = await merchant.card(one)
    assert record is not None and str(record.status) == "pending"
