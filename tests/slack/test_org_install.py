"""An Enterprise Grid org-wide install: connected as its org (``E…``), it serves its members.

Each member's own workspace is a ``T…`` inside the org, never the installation itself. Before
the org counted, every one of them was told "I don't know who you are", on every entry point.
A user of a workspace outside the org is still nobody.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from bot.sandbox.payloads import (
    TEAM,
    block_action,
    command,
    event,
    form,
    home_opened,
    message,
    view_submission,
)
from tests.slack.conftest import CHANNEL, Bot, approve_modals, buttons, card_id, request_status
from tools.people.connections import Platform

ORG = "E0FIESTA"
OUTSIDER_TEAM = "T0OTHERCO"


async def _org_wide(bot: Bot) -> None:
    """Fiesta's workspace is one of the org's, and the org (not the workspace) is connected."""
    bot.slack.workspace.add_team(TEAM, "Fiesta Foods", enterprise=ORG)
    connections = bot.services.directory.connections
    await connections.disconnect(Platform.SLACK, TEAM)
    await connections.connect(Platform.SLACK, ORG, 1)


async def _mention(bot: Bot, user: str, text: str, *, team: str = TEAM) -> str:
    """@mentions the bot as Slack delivers it under the org-wide install; returns the thread."""
    ts = bot.ts()
    inner = message(
        user, f"<@UBOT> {text}", channel=CHANNEL, ts=ts, kind="app_mention", user_team=team
    )
    body = json.dumps(event(inner, enterprise=ORG))
    await bot.post(body, "application/json")
    await bot.settle()
    return ts


async def _slash(bot: Bot, user: str, text: str) -> str:
    fields = command(
        user, text, channel=CHANNEL, response_url=bot.slack.response_url(), enterprise=ORG
    )
    await bot.post(urlencode(fields), "application/x-www-form-urlencoded")
    await bot.settle()
    return str(bot.slack.responses[-1]["text"])


def _replies(bot: Bot, thread: str) -> list[str]:
    return [m.text for m in bot.slack.messages if m.thread_ts == thread and m.user == "UBOT"]


async def test_a_member_is_answered_and_linked_on_first_contact(bot: Bot) -> None:
    """Arjun, of a workspace inside the connected org, writes for the first time: he is linked
    by his confirmed email under the org, and the card he asked for is posted."""
    await _org_wide(bot)
    thread = await _mention(bot, "UARJUN", "approve request 3")
    assert not any("don't know who you are" in text for text in _replies(bot, thread))
    [card] = bot.cards()
    assert card.thread_ts == thread
    linked = await bot.services.directory.resolve("slack", ORG, "UARJUN")
    assert linked is not None and linked.name == "Arjun Mehta"


async def test_a_member_approves_with_a_press(bot: Bot) -> None:
    """Arjun's Approve under the org-wide install (its ``team`` null, as Slack sends it) runs."""
    await _org_wide(bot)
    await _mention(bot, "UARJUN", "approve request 3")
    [card] = bot.cards()
    actions = next(b for b in card.blocks if b["type"] == "actions")
    press = block_action(
        "UARJUN",
        action_id="card_approve",
        value=actions["elements"][0]["value"],
        block_id=actions["block_id"],
        channel=CHANNEL,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
        enterprise=ORG,
    )
    await bot.post(form(press), "application/x-www-form-urlencoded")
    [view] = approve_modals(bot)  # the channel card's confirm: "Yes, approve"
    await bot.post(
        form(view_submission("UARJUN", view, values={}, enterprise=ORG)),
        "application/x-www-form-urlencoded",
    )
    await bot.settle()
    assert await request_status(bot, 3) == "approved"
    assert buttons(bot.shown(card).blocks) == []


async def test_a_member_lists_pending_cards_with_the_slash_command(bot: Bot) -> None:
    """`/countersign pending` under the org-wide install lists Arjun's waiting card."""
    await _org_wide(bot)
    await _mention(bot, "UARJUN", "approve request 3")
    assert await _slash(bot, "UARJUN", "pending") == "1 approval card is waiting for you."


async def test_a_member_sees_their_cards_in_the_app_home(bot: Bot) -> None:
    """Opening the App Home under the org-wide install shows Arjun his waiting card."""
    await _org_wide(bot)
    await _mention(bot, "UARJUN", "approve request 3")
    [card] = bot.cards()
    opened = event(home_opened("UARJUN", channel=bot.dm("UARJUN")), enterprise=ORG)
    await bot.post(json.dumps(opened), "application/json")
    await bot.settle()
    home = bot.home("UARJUN")
    shown = [b for b in home["blocks"] if b["type"] == "actions"]
    assert [card_id_of(b) for b in shown] == [card_id(card)]


async def test_a_user_outside_the_org_is_nobody(bot: Bot) -> None:
    """A Slack Connect user of a workspace outside the org, with a confirmed Fiesta email, is
    told to get linked wherever he writes from: a mention, or the slash command."""
    await _org_wide(bot)
    bot.slack.add_user("UFOREIGN", "Meera I", "meera@fiesta.example", team=OUTSIDER_TEAM)
    thread = await _mention(bot, "UFOREIGN", "pending requests", team=OUTSIDER_TEAM)
    replies = _replies(bot, thread)
    assert replies and all("don't know who you are" in text for text in replies), replies
    assert "don't know who you are" in await _slash(bot, "UFOREIGN", "pending")
    assert await bot.services.directory.resolve("slack", ORG, "UFOREIGN") is None


def card_id_of(block: dict[str, object]) -> str:
    """The card id an actions block of the App Home was drawn for."""
    from bot.slack.blocks import card_id_of_block

    found = card_id_of_block(str(block["block_id"]))
    assert found is not None
    return found
