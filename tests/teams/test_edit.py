"""Edit on Teams cards over /api/messages: the form, a refused value, a new card, someone else."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from tests.support.fake_connector import Call, Member
from tests.support.teams_activities import CHANNEL, invoke, submit
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, MEERA, TeamsBot, card_data
from tests.teams.test_routing import copy_for, routed
from tools.cards.record import CardStatus
from tools.toolsets.merchant.models import Order, Refund

Json = dict[str, Any]


async def _order(bot: TeamsBot) -> Order:
    async with bot.services.db.session() as session:
        stmt = (
            select(Order)
            .where(Order.tenant_id == 1, Order.status == "fulfilled", Order.total >= 30_000)
            .order_by(Order.id)
            .limit(1)
        )
        return (await session.scalars(stmt)).one()


async def _refunds(bot: TeamsBot, order: Order) -> list[int]:
    async with bot.services.db.session() as session:
        found = await session.scalars(select(Refund.amount).where(Refund.order_id == order.id))
        return list(found)


async def _act(
    bot: TeamsBot, member: Member, card: Call, verb: str, *, personal: bool = False, **inputs: str
) -> Json:
    """Presses ``verb`` on a card the bot sent, with the form's inputs; returns the card answered."""
    data = {**card_data(card.cards[0]), "verb": verb, **inputs}
    activity = invoke(
        member,
        verb,
        data,
        service_url=bot.connector.url,
        reply_to=str(card.created),
        conversation=card.conversation,
        personal=personal,
    )
    status, body = await bot.post(activity)
    assert status == 200 and body["statusCode"] == 200, body
    answered = dict(body["value"])
    validate(answered)
    return answered


def _inputs(card: Json) -> dict[str, Json]:
    return {e["id"]: e for e in card["body"] if str(e["type"]).startswith("Input.")}


async def _asked(bot: TeamsBot) -> tuple[Order, Call, str]:
    """Arjun asks for a refund of 300 in the channel; returns the order, the card, its id."""
    order = await _order(bot)
    posted = await bot.card_for(ARJUN, f"refund order {order.id} 300")
    return order, posted, card_data(posted.cards[0])["card"]


async def test_edit_opens_a_form_prefilled_with_the_cards_values(signed: TeamsBot) -> None:
    """Arjun's own view has Edit; pressing it answers with the amount and reason as inputs,
    "Make new card" and Cancel, and changes nothing anywhere."""
    _, posted, _ = await _asked(signed)
    mine = await signed.refresh(ARJUN, posted)
    assert [b["verb"] for b in actions(mine)] == ["approve", "edit", "reject"]
    form = await _act(signed, ARJUN, posted, "edit")
    inputs = _inputs(form)
    assert inputs["edit_amount"]["type"] == "Input.Number" and inputs["edit_amount"]["value"] == 300
    assert inputs["edit_reason"]["type"] == "Input.Text" and inputs["edit_reason"]["value"] == ""
    assert [(b["verb"], b["associatedInputs"]) for b in actions(form)] == [
        ("edit_save", "auto"),
        ("edit_cancel", "none"),
    ]
    assert "refresh" not in form
    assert signed.connector.updates() == []
    back = await _act(signed, ARJUN, posted, "edit_cancel")
    assert [b["verb"] for b in actions(back)] == ["approve", "edit", "reject"]


async def test_an_invalid_value_is_answered_in_the_form_and_nothing_changes(
    signed: TeamsBot,
) -> None:
    """A negative amount, or more than is left, comes back as the form with the engine's words
    right under the amount and the value as typed; no card is posted or updated."""
    _, posted, card_id = await _asked(signed)
    cards_before = len(signed.connector.card_posts())
    for typed, words in (("-5", "amount"), ("99999999", "left to refund")):
        form = await _act(signed, ARJUN, posted, "edit_save", edit_amount=typed, edit_reason="")
        body = form["body"]
        at = next(i for i, e in enumerate(body) if e.get("id") == "edit_amount")
        assert body[at]["value"] == int(typed)
        assert body[at + 1]["style"] == "attention"
        assert words in texts({"body": [body[at + 1]]}).lower()
        assert [b["verb"] for b in actions(form)] == ["edit_save", "edit_cancel"]
    assert len(signed.connector.card_posts()) == cards_before
    assert signed.connector.updates() == []
    record = await signed.registry.card(card_id)
    assert record is not None and record.status is CardStatus.PENDING


async def test_an_edit_replaces_the_card_and_approving_runs_the_edited_value_once(
    signed: TeamsBot,
) -> None:
    """200 posts a new card in the channel; the old card reads "Replaced by an edited card:
    ₹300.00 → ₹200.00" for everyone with no buttons; approving the new one refunds 200, once."""
    order, posted, card_id = await _asked(signed)
    answered = await _act(signed, ARJUN, posted, "edit_save", edit_amount="200", edit_reason="")
    assert "Replaced by an edited card: ₹300.00 → ₹200.00" in texts(answered)
    assert actions(answered) == [] and "refresh" not in answered
    [update] = [u for u in signed.connector.updates() if u.activity_id == posted.created]
    assert "Replaced by an edited card: ₹300.00 → ₹200.00" in texts(update.cards[0])
    new = [c for c in signed.connector.card_posts() if c.conversation == CHANNEL][-1]
    assert new.created != posted.created
    assert "₹200.00" in texts(new.cards[0])
    old = await signed.registry.card(card_id)
    assert old is not None and old.status is CardStatus.SUPERSEDED
    assert "Arjun Mehta edited the card" in signed.assistant.notes[-1][1]
    assert await _refunds(signed, order) == []

    done = await _act(signed, ARJUN, new, "approve")
    assert "Approved" in texts(done)
    again = await _act(signed, ARJUN, new, "approve")
    assert "already" in texts(again).lower()
    assert await _refunds(signed, order) == [20_000]


async def test_a_card_that_ran_out_of_time_in_the_form_shows_expired(signed: TeamsBot) -> None:
    """ "Make new card" after the card's 30 minutes: no new card and no form again; the presser
    and the channel see the card expired, and nothing is refunded."""
    order, posted, card_id = await _asked(signed)
    cards_before = len(signed.connector.card_posts())
    signed.clock.step(timedelta(minutes=31))
    answered = await _act(signed, ARJUN, posted, "edit_save", edit_amount="200", edit_reason="")
    assert "Expired" in texts(answered) and _inputs(answered) == {}
    assert actions(answered) == []
    assert len(signed.connector.card_posts()) == cards_before
    [update] = signed.connector.updates()
    assert update.activity_id == posted.created and "Expired" in texts(update.cards[0])
    record = await signed.registry.card(card_id)
    assert record is not None and record.status is CardStatus.EXPIRED
    assert await _refunds(signed, order) == []


async def test_someone_the_card_is_not_issued_to_cannot_edit(signed: TeamsBot) -> None:
    """Meera pressing Edit, or sending "Make new card", on Arjun's card is told privately it
    is his; she gets no form, and no card is posted or changed."""
    order, posted, card_id = await _asked(signed)
    cards_before = len(signed.connector.card_posts())
    theirs = await signed.refresh(MEERA, posted)
    assert actions(theirs) == []
    for verb in ("edit", "edit_save"):
        answered = await _act(signed, MEERA, posted, verb, edit_amount="1", edit_reason="")
        assert "This approval belongs to Arjun Mehta" in texts(answered)
        assert _inputs(answered) == {} and actions(answered) == []
    assert len(signed.connector.card_posts()) == cards_before
    assert signed.connector.updates() == []
    record = await signed.registry.card(card_id)
    assert record is not None and record.status is CardStatus.PENDING
    assert await _refunds(signed, order) == []


async def test_a_managers_1_1_copy_offers_edit_and_the_new_card_goes_to_the_channel(
    signed: TeamsBot,
) -> None:
    """Meera edits Ravi's routed card from her 1:1 chat: the new card is posted in the channel
    where Ravi asked, and her copy, Arjun's and the channel's all read replaced."""
    posted = await routed(signed)
    mine = copy_for(signed, MEERA)
    assert [b["verb"] for b in actions(mine.cards[0])] == ["approve", "edit", "reject"]
    form = await _act(signed, MEERA, mine, "edit", personal=True)
    assert set(_inputs(form)) == {"edit_note"}
    answered = await _act(
        signed, MEERA, mine, "edit_save", personal=True, edit_note="Paid from petty cash"
    )
    assert "Replaced by an edited card" in texts(answered)
    new = [c for c in signed.connector.card_posts() if c.conversation == CHANNEL][-1]
    assert new.created != posted.created and "Paid from petty cash" in texts(new.cards[0])
    replaced = {
        u.conversation
        for u in signed.connector.updates()
        if "Replaced by an edited card" in texts(u.cards[0])
    }
    assert replaced == {
        CHANNEL,
        signed.connector.chat_with(MEERA),
        signed.connector.chat_with(ARJUN),
    }


async def test_an_older_clients_submit_gets_the_form_and_its_refusal_in_the_chat(
    signed: TeamsBot,
) -> None:
    """Action.Submit (no Action.Execute): Edit sends the form in the conversation, a refused
    amount sends it again with the refusal, and a valid one replaces the card like Execute."""
    order, posted, card_id = await _asked(signed)

    async def send(verb: str, **inputs: str) -> list[Call]:
        before = len(signed.connector.card_posts())
        data = {**card_data(posted.cards[0]), "verb": verb, **inputs}
        url, created = signed.connector.url, str(posted.created)
        assert (await signed.post(submit(ARJUN, data, service_url=url, reply_to=created)))[0] == 202
        return signed.connector.card_posts()[before:]

    [form] = await send("edit")
    assert set(_inputs(form.cards[0])) == {"edit_amount", "edit_reason"}
    [refused] = await send("edit_save", edit_amount="-5", edit_reason="")
    assert "amount" in texts(refused.cards[0]).lower() and _inputs(refused.cards[0])
    assert signed.connector.updates() == []
    [new] = await send("edit_save", edit_amount="200", edit_reason="")
    assert "₹200.00" in texts(new.cards[0])
    old = await signed.registry.card(card_id)
    assert old is not None and old.status is CardStatus.SUPERSEDED
    assert await _refunds(signed, order) == []
