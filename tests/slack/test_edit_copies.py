"""Edit on every live copy of a card: a manager's DM copy, and a card redrawn after a first approval."""

from __future__ import annotations

from typing import Any

from tests.slack.conftest import CHANNEL, Bot, buttons, card_id, request_status, said
from tests.slack.test_routed_cards import routed
from tests.slack.test_two_approvers import big_card
from tests.support.slack_requests import block_action, view_submission
from tools.cards.record import CardStatus


def _note(value: str) -> dict[str, Any]:
    """The Edit modal of an 'approve request' card, as Slack sends its state."""
    return {"edit_note": {"value": {"type": "plain_text_input", "value": value}}}


async def test_a_managers_dm_copy_offers_edit_and_editing_from_it_replaces_the_card(
    bot: Bot,
) -> None:
    """Meera edits Ravi's routed card from her DM: the modal opens there, the new card goes to
    the thread, every old copy reads replaced, and approving the new card runs it once."""
    card, copies = await routed(bot)
    asked = card_id(card)
    meera = copies["UMEERA"]
    assert buttons(meera.blocks) == ["card_approve", "card_edit", "card_reject"]
    await bot.press("UMEERA", meera, action="card_edit")
    [opened] = bot.slack.called("views.open")
    answer = await bot.answer(
        view_submission("UMEERA", opened["view"], values=_note("Paid from petty cash"))
    )
    assert answer.get("response_action") is None, answer
    new = [c for c in bot.cards() if c.ts != card.ts]
    assert len(new) == 1 and new[0].thread_ts == card.thread_ts
    assert "Paid from petty cash" in said(new[0].blocks)
    for copy in (card, *copies.values()):
        shown = bot.shown(copy)
        assert buttons(shown.blocks) == []
        assert "Replaced by an edited card" in said(shown.blocks)
    old = await bot.registry.card(asked)
    assert old is not None and old.status is CardStatus.SUPERSEDED
    assert await request_status(bot, 1) == "pending"

    await bot.press("UMEERA", new[0])
    assert await request_status(bot, 1) == "approved"
    assert bot.shown(new[0]).blocks[0]["text"]["text"] == "Approved and done"


async def test_a_card_redrawn_after_a_first_approval_still_offers_edit(bot: Bot) -> None:
    """After Arjun's first of two approvals, the thread's card, Meera's copy and her App Home
    still carry Edit, and Edit on the redrawn card opens her the modal."""
    _, card, copies = await big_card(bot)
    await bot.press("UARJUN", copies["UARJUN"])
    thread = bot.shown(card)
    assert "1 of 2" in said(thread.blocks)
    assert buttons(thread.blocks) == ["card_approve", "card_edit", "card_reject", "card_withdraw"]
    assert buttons(bot.shown(copies["UMEERA"]).blocks) == [
        "card_approve",
        "card_edit",
        "card_reject",
    ]
    assert "card_edit" in buttons(bot.home("UMEERA")["blocks"])
    await bot.press("UMEERA", thread, action="card_edit")
    [opened] = bot.slack.called("views.open")
    assert opened["view"]["callback_id"] == "card_edit_modal"
    assert len(bot.cards(CHANNEL)) == 1


async def test_edit_from_the_app_home_opens_the_modal_and_replaces_the_card(bot: Bot) -> None:
    """Arjun presses Edit on Ravi's routed card in his App Home: the modal opens there, and
    submitting it posts the new card in the thread the card was asked in."""
    card, _ = await routed(bot)
    await bot.send({"type": "app_home_opened", "user": "UARJUN", "tab": "home"})
    home = bot.home("UARJUN")
    block = next(b for b in home["blocks"] if b["type"] == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == "card_edit")
    press = block_action(
        "UARJUN",
        action_id="card_edit",
        value=button["value"],
        block_id=block["block_id"],
        channel=None,
        message_ts=None,
        view=home,
    )
    await bot.interact(press)
    [opened] = bot.slack.called("views.open")
    answer = await bot.answer(
        view_submission("UARJUN", opened["view"], values=_note("Approved for the weekend"))
    )
    assert answer.get("response_action") is None, answer
    [new] = [c for c in bot.cards() if c.ts != card.ts]
    assert new.thread_ts == card.thread_ts
    assert "Approved for the weekend" in said(new.blocks)
    assert "Replaced by an edited card" in said(bot.shown(card).blocks)
