"""The /countersign slash command and the App Home: help and the person's own pending cards."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

from bot.sandbox.payloads import TEAM, block_action, message
from bot.sandbox.webapi import RESPONSE_USES
from tests.slack.conftest import CHANNEL, DM, Bot
from tests.support.slack_requests import command, event
from tools.people.connections import Connections, Platform


async def slash(bot: Bot, user: str, text: str) -> int:
    body = urlencode(command(user, text, channel=CHANNEL, response_url=bot.slack.response_url()))
    response = await bot.post(body, "application/x-www-form-urlencoded")
    await bot.settle()
    return response.status


async def test_help_is_private(bot: Bot) -> None:
    """`/countersign help` answers only the person who asked (ephemeral, via response_url)."""
    assert await slash(bot, "URAVI", "help") == 200
    assert len(bot.slack.responses) == 1
    answer = bot.slack.responses[0]
    assert answer["response_type"] == "ephemeral"
    assert "/countersign pending" in answer["text"]
    assert bot.slack.called("chat.postMessage") == []


async def test_pending_lists_only_my_cards_with_buttons(bot: Bot) -> None:
    """`/countersign pending` shows Arjun his waiting card, with its buttons, and not Meera's."""
    await bot.mention("UARJUN", "approve request 3")
    await bot.mention("UMEERA", "approve request 4")
    await slash(bot, "UARJUN", "pending")
    answer = bot.slack.responses[-1]
    assert answer["response_type"] == "ephemeral"
    assert answer["text"] == "1 approval card is waiting for you."
    actions = [b for b in answer["blocks"] if b["type"] == "actions"]
    assert len(actions) == 1
    assert "#3" in str(answer["blocks"]) or "request 3" in str(answer["blocks"]).lower()


async def test_unlinked_person_sees_no_cards(bot: Bot) -> None:
    """A stranger asking for pending cards is told how to get access."""
    await slash(bot, "USTRANGER", "pending")
    assert "don't know who you are" in bot.slack.responses[-1]["text"]


async def test_app_home_shows_my_pending_cards(bot: Bot) -> None:
    """Opening the App Home publishes an intro and the person's waiting cards with buttons."""
    await bot.mention("UARJUN", "approve request 3")
    await bot.send(
        {"type": "app_home_opened", "user": "UARJUN", "channel": "D0ARJUN", "tab": "home"}
    )
    published = bot.slack.called("views.publish")
    assert [p["user_id"] for p in published] == ["UARJUN"]
    view = published[0]["view"]
    assert view["type"] == "home"
    assert "Nothing changes until you press" in view["blocks"][0]["text"]["text"]
    assert [b for b in view["blocks"] if b["type"] == "actions"]


async def test_approve_from_app_home_updates_the_channel_card(bot: Bot) -> None:
    """A press in the App Home approves the card and updates it where it was posted."""
    from tests.support.slack_requests import block_action

    await bot.mention("UARJUN", "approve request 3")
    card = bot.cards()[0]
    await bot.send(event({"type": "app_home_opened", "user": "UARJUN", "tab": "home"})["event"])
    home = bot.slack.called("views.publish")[-1]["view"]
    block = next(b for b in home["blocks"] if b["type"] == "actions")
    payload = block_action(
        "UARJUN",
        action_id="card_approve",
        value=block["elements"][0]["value"],
        block_id=block["block_id"],
        channel="",
        message_ts="",
    )
    payload["container"] = {"type": "view", "view_id": "V1"}
    payload.pop("channel")
    await bot.interact(payload)
    assert bot.slack.message(CHANNEL, card.ts).blocks[0]["text"]["text"] == "Approved and done"
    assert len(bot.slack.called("views.publish")) == 2


async def test_a_card_approved_from_the_app_home_stays_there_decided(bot: Bot) -> None:
    """After Arjun approves from his App Home, the tab shows that card at its top as approved
    and done, with no buttons; it used to vanish with no outcome shown."""
    await bot.mention("UARJUN", "approve request 3")
    await bot.send(event({"type": "app_home_opened", "user": "UARJUN", "tab": "home"})["event"])
    home = bot.slack.called("views.publish")[-1]["view"]
    block = next(b for b in home["blocks"] if b["type"] == "actions")
    payload = block_action(
        "UARJUN",
        action_id="card_approve",
        value=block["elements"][0]["value"],
        block_id=block["block_id"],
        channel="",
        message_ts="",
        view={"id": home.get("id", "V1"), **home},
    )
    await bot.interact(payload)
    after = bot.slack.called("views.publish")[-1]["view"]
    shown = str(after["blocks"])
    assert "Approved and done" in shown and "request 3" in shown.lower()
    assert not [b for b in after["blocks"] if b["type"] == "actions"]


async def _connected(bot: Bot) -> Connections:
    connections = Connections(bot.services.db)
    await connections.connect(Platform.SLACK, TEAM, 1)
    return connections


async def test_audit_here_records_decisions_made_in_a_dm(bot: Bot) -> None:
    """A manager's `/countersign audit here` makes the channel the workspace's audit channel;
    a card approved in a DM, once recorded only in that DM, is recorded there too."""
    connections = await _connected(bot)
    assert await slash(bot, "UARJUN", "audit here") == 200
    answer = bot.slack.responses[-1]
    assert answer["response_type"] == "ephemeral"
    assert f"<#{CHANNEL}>" in answer["text"]
    found = await connections.connection(Platform.SLACK, TEAM)
    assert found is not None and found.audit_channel == CHANNEL
    await bot.send(
        message("UARJUN", "approve request 3", channel=DM, ts=bot.ts(), channel_type="im")
    )
    card = bot.cards(DM)[0]
    assert await bot.press("UARJUN", card) == 200
    recorded = [m for m in bot.slack.messages if m.channel == CHANNEL]
    assert len(recorded) == 1
    assert recorded[0].text.startswith(
        ":white_check_mark: Approved and done (Arjun Mehta): Approve request 3"
    )


async def test_only_an_owner_or_manager_sets_the_audit_channel(bot: Bot) -> None:
    """Ravi (staff) is refused privately, and a DM cannot be the audit channel; nothing is set."""
    connections = await _connected(bot)
    await slash(bot, "URAVI", "audit here")
    assert "Only an owner or a manager" in bot.slack.responses[-1]["text"]
    body = urlencode(
        command("UARJUN", "audit here", channel=DM, response_url=bot.slack.response_url())
    )
    await bot.post(body, "application/x-www-form-urlencoded")
    await bot.settle()
    assert "direct message can't be the audit channel" in bot.slack.responses[-1]["text"]
    assert all(r["response_type"] == "ephemeral" for r in bot.slack.responses)
    found = await connections.connection(Platform.SLACK, TEAM)
    assert found is not None and found.audit_channel is None


async def test_pending_from_a_number_lists_the_rest(bot: Bot) -> None:
    """`/countersign pending 2` lists the waiting cards from the second on (the note under a
    long list points there)."""
    await bot.mention("UARJUN", "approve request 3")
    bot.clock.step(timedelta(seconds=1))  # the cards are listed oldest first
    await bot.mention("UARJUN", "approve request 6")
    await slash(bot, "UARJUN", "pending 2")
    blocks = bot.slack.responses[-1]["blocks"]
    assert len([b for b in blocks if b["type"] == "actions"]) == 1
    assert "request 6" in str(blocks) and "request 3" not in str(blocks)


async def test_a_press_on_a_stale_pending_list_draws_it_again(bot: Bot) -> None:
    """Meera lists her cards, approves Ravi's from her DM while Slack no longer takes the
    list's URL, then presses the list's copy: she is told it was already approved, and the
    list is drawn again through the press's URL without its buttons; it kept live
    Approve/Edit/Reject on a card she had decided."""
    await bot.mention("URAVI", "approve request 1")
    [copy] = bot.cards(bot.dm("UMEERA"))
    url = bot.slack.response_url(to=("UMEERA", CHANNEL))
    body = urlencode(command("UMEERA", "pending", channel=CHANNEL, response_url=url))
    await bot.post(body, "application/x-www-form-urlencoded")
    await bot.settle()
    [listed] = [m for m in bot.slack.messages if m.ephemeral_to == "UMEERA" and m.blocks]
    assert "card_approve" in str(listed.blocks)
    bot.slack.response_uses[url.rsplit("/", 1)[-1]] = RESPONSE_USES

    block = next(b for b in listed.blocks if b["type"] == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == "card_approve")
    assert await bot.press("UMEERA", copy) == 200
    await bot.settle()
    assert not listed.edited
    replace = bot.slack.response_url(to=("UMEERA", CHANNEL), replaces=(CHANNEL, listed.ts))
    pressed = block_action(
        "UMEERA",
        action_id="card_approve",
        value=button["value"],
        block_id=block["block_id"],
        channel=CHANNEL,
        message_ts=listed.ts,
        response_url=replace,
        ephemeral=True,
    )
    assert await bot.interact(pressed) == 200

    assert any("already approved" in text for text in bot.ephemerals("UMEERA"))
    assert listed.edited and "card_approve" not in str(listed.blocks)
    assert listed.text == "No cards are waiting for you."
