"""Edit: the button opens a prefilled modal; a valid edit replaces the card in its thread."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from sqlalchemy import select

from bot.turns import posting
from tests.slack.conftest import CHANNEL, Bot, buttons, card_id, said
from tests.support.slack_requests import block_action, event, form, message, view_submission
from tools.cards.record import CardStatus
from tools.toolsets.merchant.models import Order, Refund


async def _order(bot: Bot) -> Order:
    async with bot.services.db.session() as session:
        stmt = (
            select(Order)
            .where(Order.tenant_id == 1, Order.status == "fulfilled", Order.total >= 30_000)
            .order_by(Order.id)
            .limit(1)
        )
        return (await session.scalars(stmt)).one()


def _amount(value: str | None, reason: str | None = None) -> dict[str, Any]:
    """The modal's state as Slack sends it: an emptied input is null."""
    return {
        "edit_amount": {"value": {"type": "plain_text_input", "value": value}},
        "edit_reason": {"value": {"type": "plain_text_input", "value": reason}},
    }


async def _opened(bot: Bot) -> tuple[Order, str, dict[str, Any]]:
    """Arjun asks for a refund of 300 and presses Edit on its card."""
    order = await _order(bot)
    thread = await bot.mention("UARJUN", f"refund order {order.id} 300")
    card = bot.cards()[0]
    assert "card_edit" in buttons(card.blocks)
    await bot.press("UARJUN", card, action="card_edit")
    opened = bot.slack.called("views.open")
    assert len(opened) == 1
    return order, thread, opened[0]["view"]


async def test_edit_opens_a_prefilled_modal(bot: Bot) -> None:
    """The modal holds the card's amount and reason, and nothing changes until it is sent."""
    _order_row, _thread, view = await _opened(bot)
    assert view["callback_id"] == "card_edit_modal"
    inputs = {b["block_id"]: b["element"] for b in view["blocks"] if b["type"] == "input"}
    assert inputs["edit_amount"]["initial_value"] == "300.00"
    assert inputs["edit_reason"]["initial_value"] == ""
    assert json.loads(view["private_metadata"])["card_id"] == card_id(bot.cards()[0])
    assert bot.slack.called("chat.update") == []


async def test_invalid_amount_is_answered_in_the_modal(bot: Bot) -> None:
    """A negative amount, or more than is left, comes back as modal errors; the card stays."""
    _order_row, _thread, view = await _opened(bot)
    card = bot.cards()[0]
    for typed, words in (("-5", "amount"), ("99999999", "left to refund")):
        answer = await bot.answer(view_submission("UARJUN", view, values=_amount(typed)))
        assert answer["response_action"] == "errors"
        assert words in answer["errors"]["edit_amount"].lower()
    assert bot.slack.called("chat.update") == []
    assert len(bot.cards()) == 1
    stored = await bot.registry.card(card_id(card))
    assert stored is not None and stored.status is CardStatus.PENDING


async def test_valid_edit_replaces_the_card_and_approving_runs_it(bot: Bot) -> None:
    """200 makes a new card in the thread; the old reads replaced; approving refunds 200 once."""
    order, thread, view = await _opened(bot)
    old = bot.cards()[0]
    answer = await bot.answer(view_submission("UARJUN", view, values=_amount("200")))
    assert answer.get("response_action") is None
    new = [c for c in bot.cards() if c.ts != old.ts]
    assert len(new) == 1 and new[0].thread_ts == thread
    assert "₹200.00" in said(new[0].blocks)
    shown = bot.slack.message(CHANNEL, old.ts)
    assert buttons(shown.blocks) == []
    assert "Replaced by an edited card: ₹300.00 → ₹200.00" in said(shown.blocks)
    note = bot.assistant.notes[-1][1]
    assert "Arjun Mehta edited the card" in note and "₹300.00 → ₹200.00" in note

    await bot.press("UARJUN", new[0])
    async with bot.services.db.session() as session:
        refunds = (await session.scalars(select(Refund).where(Refund.order_id == order.id))).all()
    assert [r.amount for r in refunds] == [20_000]
    assert bot.slack.message(CHANNEL, new[0].ts).blocks[0]["text"]["text"] == "Approved and done"


async def test_someone_else_cannot_edit(bot: Bot) -> None:
    """Meera pressing Edit on Arjun's card gets no modal; a forged submission is refused."""
    _order_row, _thread, view = await _opened(bot)
    card = bot.cards()[0]
    await bot.press("UMEERA", card, action="card_edit")
    assert len(bot.slack.called("views.open")) == 1
    assert "belongs to <@UARJUN>" in bot.ephemerals("UMEERA")[0]
    answer = await bot.answer(view_submission("UMEERA", view, values=_amount("200")))
    assert answer["response_action"] == "errors"
    assert len(bot.cards()) == 1


HARBOR_TEAM, HARBOR_CHANNEL = "T0HARBOR", "C0HARBOR"


async def _sams_edit(bot: Bot) -> tuple[str, dict[str, Any]]:
    """Sam, alone at Harbor Books in his own workspace, asks for a refund of 5 and presses Edit
    on its card; returns his thread and the modal that opened."""
    bot.slack.add_user("USAM", "Sam Lee", "sam@harbor.example", team=HARBOR_TEAM)
    await bot.services.directory.link("slack", HARBOR_TEAM, "USAM", "sam@harbor.example")
    async with bot.services.db.session() as session:
        stmt = select(Order.id).where(Order.tenant_id == 2, Order.status == "fulfilled")
        order = (await session.scalars(stmt.order_by(Order.id).limit(1))).one()
    thread = bot.ts()
    inner = message(
        "USAM",
        f"<@UBOT> refund order {order} 5",
        channel=HARBOR_CHANNEL,
        ts=thread,
        kind="app_mention",
        team=HARBOR_TEAM,
    )
    await bot.post(json.dumps(event(inner, team=HARBOR_TEAM)), "application/json")
    await bot.settle()
    [card] = bot.cards(HARBOR_CHANNEL)
    actions = next(b for b in card.blocks if b["type"] == "actions")
    edit = next(e for e in actions["elements"] if e["action_id"] == "card_edit")
    press = block_action(
        "USAM",
        action_id="card_edit",
        value=edit["value"],
        block_id=actions["block_id"],
        channel=HARBOR_CHANNEL,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
        team=HARBOR_TEAM,
        user_team=HARBOR_TEAM,
    )
    await bot.interact(press)
    [opened] = bot.slack.called("views.open")
    return thread, opened["view"]


async def test_an_edit_is_placed_by_its_signed_card_not_the_modals_metadata(bot: Bot) -> None:
    """Sam's Edit modal comes back naming a Fiesta card in its metadata: the new card still goes
    into Sam's own Harbor thread, and Fiesta's thread is not touched."""
    order = await _order(bot)
    fiesta_thread = await bot.mention("UARJUN", f"refund order {order.id} 300")
    [fiesta_card] = bot.cards()
    fiesta_said = len(bot.slack.thread(CHANNEL, fiesta_thread))
    sams_thread, view = await _sams_edit(bot)
    meta = json.loads(view["private_metadata"])
    tampered = {**view, "private_metadata": json.dumps({**meta, "card_id": card_id(fiesta_card)})}
    submitted = view_submission("USAM", tampered, values=_amount("4"), team=HARBOR_TEAM)
    answer = await bot.answer(submitted)
    assert answer.get("response_action") is None, answer
    assert [c.ts for c in bot.cards()] == [fiesta_card.ts]
    assert len(bot.slack.thread(CHANNEL, fiesta_thread)) == fiesta_said
    stored = await bot.registry.card(card_id(fiesta_card))
    assert stored is not None and stored.status is CardStatus.PENDING
    [new] = bot.cards(HARBOR_CHANNEL)
    assert new.thread_ts == sams_thread and "$4.00" in said(new.blocks)


async def test_an_edit_press_without_a_card_in_its_block_opens_the_tokens_card(bot: Bot) -> None:
    """The Edit button's block id once carried the only card id the press read: a block id
    without one (a client that rewrote it) did nothing, silently. The signed token names the
    card, so the modal opens for it."""
    order = await _order(bot)
    await bot.mention("UARJUN", f"refund order {order.id} 300")
    card = bot.cards()[0]
    block = next(b for b in card.blocks if b["type"] == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == "card_edit")
    payload = block_action(
        "UARJUN",
        action_id="card_edit",
        value=button["value"],
        block_id="rewritten",
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
    )
    await bot.interact(payload)
    opened = bot.slack.called("views.open")
    assert len(opened) == 1
    assert json.loads(opened[0]["view"]["private_metadata"])["card_id"] == card_id(card)


async def test_an_edit_press_with_a_token_that_does_not_hold_is_answered(bot: Bot) -> None:
    """A press whose token is not ours opens nothing and says why, privately."""
    order = await _order(bot)
    await bot.mention("UARJUN", f"refund order {order.id} 300")
    card = bot.cards()[0]
    payload = block_action(
        "UARJUN",
        action_id="card_edit",
        value="not-a-token",
        block_id="rewritten",
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
    )
    await bot.interact(payload)
    assert bot.slack.called("views.open") == []
    assert any("not valid" in text for text in bot.ephemerals("UARJUN"))


async def test_an_edit_pressed_while_its_card_is_recorded_goes_to_the_cards_thread(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Arjun presses Edit on his card while its turn is still recording where it was posted:
    the edited card went to his DM, and he waited in the thread for a card that never came.
    It is posted in the thread, under the old card, which reads replaced."""
    posted, recorded, attach = asyncio.Event(), asyncio.Event(), posting.cards.attach

    async def slow_attach(*args: Any, **kwargs: Any) -> Any:
        posted.set()  # in the thread, not yet recorded
        await recorded.wait()
        return await attach(*args, **kwargs)

    monkeypatch.setattr(posting.cards, "attach", slow_attach)
    order = await _order(bot)
    ts = bot.ts()
    asked = f"<@UBOT> refund order {order.id} 300"
    mention = message("UARJUN", asked, channel=CHANNEL, ts=ts, kind="app_mention")
    await bot.post(json.dumps(event(mention)), "application/json")
    await posted.wait()
    [old] = bot.cards()
    button = next(e for e in old.blocks[-1]["elements"] if e["action_id"] == "card_edit")
    press = block_action(
        "UARJUN",
        action_id="card_edit",
        value=button["value"],
        block_id=old.blocks[-1]["block_id"],
        channel=CHANNEL,
        message_ts=old.ts,
        thread_ts=ts,
    )
    await bot.post(form(press), "application/x-www-form-urlencoded")
    [opened] = bot.slack.called("views.open")
    submitted = view_submission("UARJUN", opened["view"], values=_amount("200"))
    await bot.post(form(submitted), "application/x-www-form-urlencoded")
    recorded.set()
    await bot.settle()

    new = [c for c in bot.cards() if c.ts != old.ts]
    assert [(c.channel, c.thread_ts) for c in new] == [(CHANNEL, ts)]
    assert bot.cards(bot.dm("UARJUN")) == []
    assert "Replaced by an edited card" in said(bot.shown(old).blocks)
