"""How a Teams card ends without an approval, over signed /api/messages: one live card per target, expiry."""

from __future__ import annotations

from datetime import timedelta

from bot.presses import sweeps
from bot.server import RUNTIME
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, RAVI, TeamsBot, card_data
from tests.teams.test_routing import routed, shown_everywhere
from tools import CardStatus


async def test_the_same_request_asked_twice_points_to_the_live_card(signed: TeamsBot) -> None:
    """Ravi asking for request 2 twice gets one card: the second answer points to the card
    already waiting, no second card is posted, and only the first is live."""
    posted = await routed(signed, "approve request 2")
    cards_before = len(signed.connector.card_posts())
    assert await signed.say(RAVI, "approve request 2") == 202
    assert len(signed.connector.card_posts()) == cards_before
    answer = signed.connector.texts()[-1]
    assert "already waiting on a card" in answer and "No new card was made" in answer
    live = await signed.card_store.pending_in(1, signed.clock())
    assert [c.card_id for c in live] == [card_data(posted.cards[0])["card"]]


async def test_a_different_write_on_the_same_target_replaces_the_card(signed: TeamsBot) -> None:
    """ "refund order 12 250" then "refund order 12": the first card is updated in place to
    "Replaced", saying by what and that nothing changed, with nothing to press."""
    old = await signed.card_for(ARJUN, "refund order 12 250")
    old_id = card_data(old.cards[0])["card"]
    new = await signed.card_for(ARJUN, "refund order 12")
    [update] = [u for u in signed.connector.updates() if u.activity_id == old.created]
    card = update.cards[0]
    validate(card)
    assert texts(card).startswith("Replaced\n") and actions(card) == []
    assert "Replaced by a newer card: Refund ₹1,752.00 on order 12" in texts(card)
    assert "Nothing was changed" in texts(card)
    record = await signed.registry.card(old_id)
    assert record is not None and record.status is CardStatus.SUPERSEDED
    live = await signed.card_store.pending_in(1, signed.clock())
    assert [c.card_id for c in live] == [card_data(new.cards[0])["card"]]


async def test_the_expiry_sweep_shows_every_copy_expired_without_a_press(signed: TeamsBot) -> None:
    """Past its time, with nobody pressing, the sweep shows the channel's card and both 1:1
    copies "Expired" with nothing to press, and posts no audit line."""
    posted = await routed(signed, "approve request 1")
    cid = card_data(posted.cards[0])["card"]
    later = signed.clock() + timedelta(minutes=31)
    runtime = signed.server.app[RUNTIME]
    said = len(signed.connector.messages())
    assert await sweeps.expire(signed.services, runtime.mounted, now=later) == 1
    shown = shown_everywhere(signed, posted)
    assert len(shown) == 3
    for update in shown.values():
        validate(update.cards[0])
        assert texts(update.cards[0]).startswith("Expired\n"), texts(update.cards[0])
        assert actions(update.cards[0]) == [] and "refresh" not in update.cards[0]
        assert texts(update.cards[0]).count("othing was changed") == 1
        assert "Nothing was changed; request 1 is still pending." in texts(update.cards[0])
    record = await signed.registry.card(cid)
    assert record is not None and record.status is CardStatus.EXPIRED
    assert len(signed.connector.messages()) == said  # nobody decided: no line for the channel
