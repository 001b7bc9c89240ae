"""Approve's confirm is shown only to whom it is true for: a channel's copy asks in a modal, a
private copy in its reader's own words, and anyone else is refused on their first press."""

from __future__ import annotations

from typing import Any

from bot.sandbox import Message
from bot.sandbox.payloads import message
from bot.slack.blocks import APPROVE_VIEW
from tests.slack.conftest import DM, Bot, buttons, card_id
from tools import CardStatus


def _approve(card: Message) -> dict[str, Any]:
    return next(
        e
        for b in card.blocks
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"] == "card_approve"
    )


def _modals(bot: Bot) -> list[dict[str, Any]]:
    return [
        c["view"]
        for c in bot.slack.called("views.open")
        if c["view"]["callback_id"] == APPROVE_VIEW
    ]


def _modal_words(view: dict[str, Any]) -> str:
    return "\n".join(
        e["text"] for b in view["blocks"] for s in b["elements"] for e in s["elements"]
    )


async def test_someone_else_is_refused_on_their_first_press_with_no_dialog(bot: Bot) -> None:
    """Meera pressing Approve on Arjun's channel card was asked "Yes, approve" and only then
    refused; now the button carries no dialog and her one press is refused, the card unchanged."""
    await bot.mention("UARJUN", "approve request 3")
    [card] = bot.cards()
    assert "confirm" not in _approve(card)
    await bot.tap("UMEERA", card)
    assert _modals(bot) == []
    [refusal] = bot.ephemerals("UMEERA")
    assert "Nothing was changed" in refusal
    record = await bot.registry.card(card_id(card))
    assert record is not None and record.status is CardStatus.PENDING


async def test_the_issuee_confirms_in_a_modal_said_to_them(bot: Bot) -> None:
    """Arjun's press on his channel card opens the confirm, which reads as his ("it runs as soon
    as you confirm", never "Only Arjun Mehta can approve this; … they confirm"); his "Yes,
    approve" runs it."""
    await bot.mention("UARJUN", "approve request 3")
    [card] = bot.cards()
    cid = card_id(card)
    await bot.tap("UARJUN", card)
    [view] = _modals(bot)
    words = _modal_words(view)
    assert "It runs as soon as you confirm, checked again first." in words
    assert "Only Arjun Mehta" not in words and "they confirm" not in words
    assert view["submit"]["text"] == "Yes, approve"
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.PENDING, "nothing ran yet"
    await bot.press("UARJUN", card)
    record = await bot.registry.card(cid)
    assert record is not None and record.status is CardStatus.DONE
    assert buttons(bot.shown(card).blocks) == []


async def test_a_private_copy_confirms_in_its_readers_words(bot: Bot) -> None:
    """Meera's DM copy of Ravi's routed card says her press runs it, not "Only Arjun Mehta or
    Meera Iyer can approve this"; a copy of a card needing two says hers counts as 1 of 2."""
    await bot.mention("URAVI", "approve request 1")
    copy = bot.cards(bot.dm("UMEERA"))[0]
    said = _approve(copy)["confirm"]["text"]["text"]
    assert said.startswith("It runs as soon as you confirm, checked again first.")
    await bot.mention("URAVI", "approve request 5")
    big = bot.cards(bot.dm("UMEERA"))[-1]
    said = _approve(big)["confirm"]["text"]["text"]
    assert said.startswith(
        "Your approval counts as 1 of the 2 needed from different people; nothing runs until then."
    )


async def test_a_card_in_the_askers_dm_has_a_dialog_only_if_they_may_approve(bot: Bot) -> None:
    """Arjun's card in his own DM asks him to confirm in his words; Ravi's routed card in his
    DM has no dialog (he may not approve it) and his press is refused at once."""
    await bot.send(
        message("UARJUN", "approve request 3", channel=DM, ts=bot.ts(), channel_type="im")
    )
    [mine] = bot.cards(DM)
    assert _approve(mine)["confirm"]["text"]["text"].startswith("It runs as soon as you confirm")
    ravi = bot.dm("URAVI")
    await bot.send(
        message("URAVI", "approve request 1", channel=ravi, ts=bot.ts(), channel_type="im")
    )
    [routed] = bot.cards(ravi)
    assert "confirm" not in _approve(routed)
    await bot.tap("URAVI", routed)
    assert _modals(bot) == []
    assert bot.ephemerals("URAVI") or [
        m for m in bot.slack.messages if m.channel == ravi and "Nothing was changed" in m.text
    ]
