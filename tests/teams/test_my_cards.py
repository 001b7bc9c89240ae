"""Asking about cards in words in Teams, over signed /api/messages: "my cards", "what is waiting for me"."""

from __future__ import annotations

from tests.teams.conftest import MEERA, RAVI, TeamsBot
from tests.teams.test_routing import routed


async def test_my_cards_lists_what_waits_for_you_and_what_you_asked_for(signed: TeamsBot) -> None:
    """After Ravi's routed "approve request 1", Meera's "what is waiting for me" lists it as
    waiting for her, and Ravi's "my cards" lists it as his, waiting for the two managers."""
    await routed(signed, "approve request 1")
    assert await signed.say(MEERA, "what is waiting for me") == 202
    meera = signed.connector.texts()[-1]
    assert "1 waiting for you, 0 you asked for waiting for others" in meera, meera
    assert "Approve request 1" in meera
    assert "Ravi Kumar asked for this card; it waits for you and expires" in meera, meera
    assert await signed.say(RAVI, "my cards") == 202
    ravi = signed.connector.texts()[-1]
    assert "0 waiting for you, 1 you asked for waiting for others" in ravi, ravi
    assert "You asked for this card; it waits for Arjun Mehta or Meera Iyer" in ravi, ravi
