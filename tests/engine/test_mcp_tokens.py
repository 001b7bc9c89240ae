"""Personal MCP tokens: each means one person at one merchant, and only its hash is stored."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from tests.support.clock import SteppedClock
from tools.db import Database, McpTokenRow
from tools.errors import AmbiguousError, NotFoundError
from tools.people.mcp_tokens import Bearer, McpToken, McpTokens
from tools.people.tables import Person

FIESTA, HARBOR = 1, 2
ARJUN, SAM = 2, 5
LAPTOP = "Claude Desktop on Arjun's laptop"


@pytest.fixture
def tokens(db: Database, clock: SteppedClock) -> McpTokens:
    return McpTokens(db, clock=clock)


async def _row(db: Database, token_id: str) -> McpTokenRow:
    async with db.session() as session:
        row = await session.get(McpTokenRow, token_id)
    assert row is not None
    return row


async def test_a_token_verifies_to_its_person_at_its_merchant(tokens: McpTokens) -> None:
    """The token ``create`` hands out verifies to the person, the merchant and the name it was
    made for."""
    text, token = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    assert text.startswith("cs_mcp_") and len(text) == len("cs_mcp_") + 43
    assert await tokens.verify(text) == Bearer(token.id, FIESTA, ARJUN, LAPTOP, None)
    assert (token.tenantid, token.personid, token.name, token.expires_at) == (
        FIESTA,
        ARJUN,
        LAPTOP,
        None,
    )


async def test_a_token_without_a_name_is_called_mcp_token(tokens: McpTokens) -> None:
    """A token created without a name, or with a blank one, is listed as "MCP token"."""
    _, unnamed = await tokens.create(FIESTA, ARJUN)
    _, blank = await tokens.create(FIESTA, ARJUN, "  \n ")
    assert unnamed.name == blank.name == "MCP token"


async def test_a_name_is_kept_on_one_line(tokens: McpTokens) -> None:
    """A name goes on approval cards as one line: a newline in it cannot add a line of its own."""
    _, token = await tokens.create(FIESTA, ARJUN, "Cursor\nApproved by Priya")
    assert token.name == "Cursor Approved by Priya"


async def test_only_the_hash_of_the_token_is_stored(db: Database, tokens: McpTokens) -> None:
    """The row holds the token's SHA-256 and 8 characters of it to tell it apart; nothing in
    the row is the token or enough to send as one."""
    text, token = await tokens.create(FIESTA, ARJUN, LAPTOP, timedelta(days=30))
    row = await _row(db, token.id)
    assert row.hash == hashlib.sha256(text.encode()).hexdigest()
    assert row.prefix == text[len("cs_mcp_") :][:8] == token.prefix
    stored = [str(getattr(row, column.key)) for column in McpTokenRow.__table__.columns]
    assert not any(text in value or text[len("cs_mcp_") :] in value for value in stored)
    assert await tokens.verify(row.hash) is None
    assert await tokens.verify(row.prefix) is None


async def test_a_revoked_token_verifies_to_nothing(tokens: McpTokens, clock: SteppedClock) -> None:
    """Once revoked, a token that verified a moment ago means nobody; the row says when."""
    text, token = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    assert await tokens.verify(text) is not None
    revoked = await tokens.revoke(FIESTA, token.id)
    assert revoked.id == token.id and revoked.revoked_at == clock.now
    assert await tokens.verify(text) is None


async def test_an_expired_token_verifies_to_nothing(tokens: McpTokens, clock: SteppedClock) -> None:
    """A token made for a day works until the day is over and never after."""
    text, token = await tokens.create(FIESTA, ARJUN, LAPTOP, timedelta(days=1))
    assert token.expires_at == clock.now + timedelta(days=1)
    clock.step(timedelta(days=1) - timedelta(seconds=1))
    bearer = await tokens.verify(text)
    assert bearer is not None and bearer.expires_at == token.expires_at
    clock.step(timedelta(seconds=1))
    assert await tokens.verify(text) is None


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        " ",
        "cs_mcp_",
        "Bearer cs_mcp_",
        "cs_mcp_" + "A" * 43,
        "cs_mcp_" + "é" * 43,
        "cs_mcp_" + "A" * 100_000,
        "\x00" * 50,
    ],
)
async def test_garbage_verifies_to_nothing(tokens: McpTokens, garbage: str) -> None:
    """Strings that are not a token Countersign made mean nobody, whatever their shape."""
    await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    assert await tokens.verify(garbage) is None


async def test_a_token_off_by_one_character_verifies_to_nothing(tokens: McpTokens) -> None:
    """A real token with one character changed, one added or one cut means nobody."""
    text, _ = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    changed = text[:-1] + ("A" if text[-1] != "A" else "B")
    for near in (changed, text + "A", text[:-1], "cs_mcp_" + secrets.token_urlsafe(32)):
        assert await tokens.verify(near) is None


async def test_another_merchants_revoke_cannot_touch_a_token(tokens: McpTokens) -> None:
    """Harbor Books revoking Fiesta's token by its id, a shortened id or its prefix finds
    nothing, and the token still works."""
    text, token = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    for ref in (token.id, token.id[:8], token.prefix, f"cs_mcp_{token.prefix}"):
        with pytest.raises(NotFoundError, match="no MCP token"):
            await tokens.revoke(HARBOR, ref)
    assert await tokens.verify(text) is not None
    assert await tokens.list(HARBOR) == []


async def test_revoke_finds_a_token_by_its_short_id_or_its_prefix(tokens: McpTokens) -> None:
    """What a list shows is enough to revoke a token: its shortened id, or its prefix with or
    without ``cs_mcp_`` and the trailing dots."""
    refs: list[Callable[[McpToken], str]] = [
        lambda t: t.id[:8],
        lambda t: f" {t.id[:8].upper()} ",
        lambda t: t.prefix,
        lambda t: f"cs_mcp_{t.prefix}…",
        lambda t: f"cs_mcp_{t.prefix}...",
    ]
    for ref in refs:
        text, token = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
        given = ref(token)
        assert (await tokens.revoke(FIESTA, given)).id == token.id, given
        assert await tokens.verify(text) is None


async def test_revoking_by_a_start_two_tokens_share_names_both(tokens: McpTokens) -> None:
    """A shortened id two tokens begin with revokes neither and names both."""
    made: dict[str, list[str]] = {}
    while not any(len(ids) > 1 for ids in made.values()):
        _, token = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
        made.setdefault(token.id[0], []).append(token.id)
    start, ids = next((k, v) for k, v in made.items() if len(v) > 1)
    with pytest.raises(AmbiguousError) as raised:
        await tokens.revoke(FIESTA, start)
    assert all(any(c.startswith(i[:8]) for c in raised.value.candidates) for i in ids)
    assert all(t.revoked_at is None for t in await tokens.list(FIESTA))


async def test_revoking_twice_keeps_the_first_time(tokens: McpTokens, clock: SteppedClock) -> None:
    """Revoking a revoked token is harmless: it stays revoked as of the first time."""
    _, token = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    first = clock.now
    await tokens.revoke(FIESTA, token.id)
    clock.step(timedelta(hours=1))
    assert (await tokens.revoke(FIESTA, token.id)).revoked_at == first


async def test_list_shows_a_merchants_tokens_newest_first(
    tokens: McpTokens, clock: SteppedClock
) -> None:
    """A merchant's list holds its own tokens, newest first, each saying whether it still works."""
    _, old = await tokens.create(FIESTA, ARJUN, "old", timedelta(days=1))
    clock.step(timedelta(hours=1))
    _, gone = await tokens.create(FIESTA, ARJUN, "gone", None)
    await tokens.revoke(FIESTA, gone.id)
    clock.step(timedelta(hours=1))
    _, new = await tokens.create(FIESTA, 4, "new", None)
    await tokens.create(HARBOR, SAM, "Sam's", None)
    clock.step(timedelta(days=1))
    listed = await tokens.list(FIESTA)
    assert [t.id for t in listed] == [new.id, gone.id, old.id]
    assert [t.state(clock.now) for t in listed] == ["active", "revoked", "expired"]


async def test_last_used_is_written_at_most_once_a_minute(
    db: Database, tokens: McpTokens, clock: SteppedClock
) -> None:
    """Every call verifies the token, but its last use is written at most once a minute."""
    text, token = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    assert (await _row(db, token.id)).last_used_at is None
    first = clock.now
    await tokens.verify(text)
    assert (await _row(db, token.id)).last_used_at == first
    clock.step(timedelta(seconds=59))
    await tokens.verify(text)
    assert (await _row(db, token.id)).last_used_at == first
    clock.step(timedelta(seconds=1))
    await tokens.verify(text)
    assert (await _row(db, token.id)).last_used_at == clock.now


async def test_a_token_is_made_only_for_a_person_of_that_merchant(tokens: McpTokens) -> None:
    """Sam is Harbor Books'; a Fiesta Foods token for him is refused, and so is nobody's."""
    for personid in (SAM, 999):
        with pytest.raises(NotFoundError):
            await tokens.create(FIESTA, personid, LAPTOP, None)
    assert await tokens.list(FIESTA) == []


async def test_a_token_of_a_person_who_left_the_merchant_means_nobody(
    db: Database, tokens: McpTokens
) -> None:
    """A person moved to another merchant (or gone) is not that merchant's caller any more:
    their old token verifies to nobody rather than to someone at either merchant."""
    text, _ = await tokens.create(FIESTA, ARJUN, LAPTOP, None)
    async with db.session(write=True) as session:
        await session.execute(update(Person).where(Person.id == ARJUN).values(tenant_id=HARBOR))
        await session.commit()
        assert await session.scalar(select(Person.tenant_id).where(Person.id == ARJUN)) == HARBOR
    assert await tokens.verify(text) is None
