"""Reaching an approver who never wrote to the app: found by the email Slack vouches for."""

from __future__ import annotations

from sqlalchemy import delete, select

from tests.slack.conftest import TEAM, Bot, card_id
from tools.people.tables import Identity


async def _forget(bot: Bot, *users: str) -> None:
    async with bot.services.db.session(write=True) as session, session.begin():
        await session.execute(delete(Identity).where(Identity.platform_user_id.in_(users)))


async def _linked(bot: Bot, user: str) -> bool:
    async with bot.services.db.session() as session:
        found = await session.scalars(
            select(Identity).where(
                Identity.platform == "slack",
                Identity.installation == TEAM,
                Identity.platform_user_id == user,
            )
        )
        return found.first() is not None


async def test_managers_who_never_wrote_get_their_copies(bot: Bot) -> None:
    """Arjun and Meera have never written to the app: their copies still reach their DMs, found
    by the email Slack confirmed for them, and they are linked as on a first message."""
    await _forget(bot, "UARJUN", "UMEERA")
    await bot.mention("URAVI", "approve request 1")
    [card] = bot.cards()
    for user in ("UARJUN", "UMEERA"):
        [copy] = bot.cards(bot.dm(user))
        assert card_id(copy) == card_id(card)
        assert await _linked(bot, user)
    looked_up = sorted(c["email"] for c in bot.slack.called("users.lookupByEmail"))
    assert looked_up == ["arjun@fiesta.example", "meera@fiesta.example"]


async def test_an_unconfirmed_email_reaches_nobody(bot: Bot) -> None:
    """Meera's Slack account with an email Slack has not confirmed is neither sent a copy nor
    linked; Arjun's confirmed one is."""
    await _forget(bot, "UARJUN", "UMEERA")
    bot.slack.workspace.users["UMEERA"].email_confirmed = None
    await bot.mention("URAVI", "approve request 1")
    assert bot.cards(bot.dm("UMEERA")) == []
    assert not await _linked(bot, "UMEERA")
    assert len(bot.cards(bot.dm("UARJUN"))) == 1
