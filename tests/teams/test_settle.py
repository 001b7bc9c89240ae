"""A Teams card settled without a press (the process stopped mid-write) is updated in Teams too."""

from __future__ import annotations

from bot.server import RUNTIME, settle
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, TeamsBot
from tools import Caller, CardStatus, Role


async def test_interrupted_card_is_updated_in_its_conversation(teams: TeamsBot) -> None:
    """A card left executing is settled as interrupted; its Teams message is updated for
    everyone, without buttons, and the conversation is told nothing was changed."""
    posted = await teams.card_for(ARJUN)
    [card] = await teams.card_store.in_state(CardStatus.PENDING)
    arjun = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
    # Claimed, as a press does just before its write; the process then "dies".
    assert await teams.card_store.claim(card.card_id, arjun, teams.registry.now())

    await settle(teams.server.app[RUNTIME], now=teams.registry.now() + teams.services.lease.expiry)

    record = await teams.registry.card(card.card_id)
    assert record is not None and record.status is CardStatus.INTERRUPTED
    [update] = teams.connector.updates()
    assert update.activity_id == posted.created
    [shown] = update.cards
    validate(shown)
    assert actions(shown) == [] and "refresh" not in shown
    assert "interrupted" in texts(shown).lower()
    assert any("nothing was changed" in t for t in teams.connector.texts())
