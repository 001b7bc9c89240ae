"""Button presses: the card, Approve by its owner, by someone else, twice, too late, tampered."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from bot.sandbox import Message
from bot.sandbox.payloads import TEAM
from tests.slack.conftest import (
    CHANNEL,
    Bot,
    approve_modals,
    request_status,
    rich_said,
    validate,
)
from tests.support.slack_requests import view_submission
from tools import CardStatus
from tools.people.connections import Platform
from tools.toolsets.merchant.models import BranchRequest


async def card_for(bot: Bot, user: str, text: str = "approve request 3") -> tuple[str, Message]:
    thread = await bot.mention(user, text)
    cards = bot.cards()
    assert len(cards) == 1, [m.text for m in bot.slack.messages]
    return thread, cards[0]


def shape(blocks: list[dict[str, Any]]) -> list[Any]:
    """A block list with ids, times and tokens taken out: what a snapshot can pin."""
    out: list[Any] = []
    for block in blocks:
        kept: dict[str, Any] = {"type": block["type"]}
        if block["type"] == "actions":
            kept["elements"] = [
                (e["action_id"], e.get("style"), "confirm" in e) for e in block["elements"]
            ]
        elif block["type"] == "section" and "fields" in block:
            kept["fields"] = [f["text"] for f in block["fields"]]
        elif block["type"] == "context":
            kept["context"] = [e["text"].split(" · ")[0] for e in block["elements"]]
        elif block["type"] == "rich_text":
            kept["rich_text"] = rich_said(block)
        else:
            kept["text"] = block["text"]["text"]
        out.append(kept)
    return out


async def test_card_is_posted_in_the_thread_with_its_buttons(bot: Bot) -> None:
    """'approve request 3' from Arjun posts a valid card in the thread, headed with whom it
    waits for (him), with its expiry and its buttons: Approve (its confirm asked when pressed,
    for whoever presses it in the channel), Edit, Reject, and Withdraw (confirmed) for the asker."""
    thread, card = await card_for(bot, "UARJUN")
    assert card.thread_ts == thread
    assert card.text.startswith("Arjun Mehta, please approve or reject:")
    validate(card.blocks)
    assert shape(card.blocks) == [
        {"type": "header", "text": "Approval needed from Arjun Mehta"},
        {"type": "rich_text", "rich_text": rich_said(card.blocks[1])},
        {"type": "rich_text", "rich_text": rich_said(card.blocks[2])},
        *(
            [{"type": "rich_text", "rich_text": rich_said(card.blocks[3])}]
            if len(card.blocks) == 6
            else []
        ),
        {"type": "context", "context": [card.blocks[-2]["elements"][0]["text"]]},
        {
            "type": "actions",
            "elements": [
                ("card_approve", "primary", False),
                ("card_edit", None, False),
                ("card_reject", "danger", False),
                ("card_withdraw", None, True),
            ],
        },
    ]
    assert "request 3" in rich_said(card.blocks[1]).lower() or "#3" in rich_said(card.blocks[1])
    fields = rich_said(card.blocks[2])
    assert "Whitefield" in fields
    assert card.blocks[-2]["elements"][0]["text"].startswith("Expires <!date^")
    confirm = card.blocks[-1]["elements"][-1]["confirm"]
    assert {confirm[k]["type"] for k in ("title", "text", "confirm", "deny")} == {"plain_text"}
    posted = bot.slack.called("chat.postMessage")[-1]
    assert (posted["parse"], posted["unfurl_links"], posted["unfurl_media"]) == (
        "none",
        False,
        False,
    )
    record = await bot.registry.card(card.blocks[-1]["block_id"].split("-")[1])
    assert record is not None and record.posting is not None
    assert {k: record.posting[k] for k in ("platform", "team", "channel", "ts", "thread_ts")} == {
        "platform": "slack",
        "team": "T0FIESTA",
        "channel": CHANNEL,
        "ts": card.ts,
        "thread_ts": thread,
    }


async def test_approve_by_the_owner_runs_once_and_everyone_sees_it(bot: Bot) -> None:
    """Arjun's Approve approves request 3, updates the card in place, broadcasts, tells the model."""
    thread, card = await card_for(bot, "UARJUN")
    first_ids = {b["block_id"] for b in card.blocks}
    assert await bot.press("UARJUN", card) == 200
    assert await request_status(bot, 3) == "approved"
    updated = bot.slack.message(CHANNEL, card.ts)
    validate(updated.blocks)
    assert not [b for b in updated.blocks if b["type"] == "actions"]
    assert updated.blocks[0]["text"]["text"] == "Approved and done"
    said = rich_said(updated.blocks[-1])
    # Said once: the outcome names who approved, so there is no separate "Approved by" line.
    assert said.startswith("Request 3 was approved by Arjun Mehta · <!date^"), said
    assert "\n" not in said and "Outcome" not in said and "<@UARJUN>" not in said
    assert not first_ids & {b["block_id"] for b in updated.blocks}
    audit = [m for m in bot.slack.thread(CHANNEL, thread) if m.reply_broadcast]
    assert len(audit) == 1
    assert audit[0].text.startswith(
        ":white_check_mark: Approved and done (Arjun Mehta): Approve request 3"
    )
    assert bot.assistant.notes and bot.assistant.notes[-1][0] == f"T0FIESTA:{CHANNEL}:{thread}"
    assert "approved the card and it was done" in bot.assistant.notes[-1][1]


async def test_model_sees_the_outcome_on_the_next_turn(bot: Bot) -> None:
    """After the approval, the conversation's history holds the outcome the model reads next."""
    _, card = await card_for(bot, "UARJUN")
    await bot.press("UARJUN", card)
    conversation = bot.assistant.notes[-1][0]
    stored = await bot.assistant.inner.store.load(conversation)
    assert "approved the card and it was done" in str(stored.messages)


async def test_someone_elses_approve_is_refused_privately(bot: Bot) -> None:
    """Meera pressing Arjun's card is told it belongs to <@UARJUN>; nothing changes."""
    _, card = await card_for(bot, "UARJUN")
    before = list(card.blocks)
    await bot.press("UMEERA", card)
    assert await request_status(bot, 3) == "pending"
    assert bot.ephemerals("UMEERA") == [
        "This approval belongs to <@UARJUN>; only they can approve or reject it. Nothing was changed."
    ]
    assert bot.slack.message(CHANNEL, card.ts).blocks == before
    assert bot.slack.called("chat.update") == []


async def test_double_press_executes_once_and_the_loser_learns_who_decided(bot: Bot) -> None:
    """Two presses at once approve once; the second presser is told who decided and when."""
    _, card = await card_for(bot, "UARJUN")
    await asyncio.gather(bot.press("UARJUN", card), bot.press("UARJUN", card))
    assert await request_status(bot, 3) == "approved"
    assert len([c for c in bot.slack.called("chat.update") if c["ts"] == card.ts]) == 1
    told = bot.ephemerals("UARJUN")
    assert len(told) == 1
    assert "already approved by Arjun Mehta" in told[0]
    broadcasts = [m for m in bot.slack.messages if m.reply_broadcast]
    assert len(broadcasts) == 1


async def test_expired_card_says_so_on_the_card(bot: Bot) -> None:
    """A press after the card's time is up changes nothing and the card says it expired."""
    _, card = await card_for(bot, "UARJUN")
    card_id = card.blocks[-1]["block_id"].split("-")[1]
    bot.clock.step(timedelta(minutes=31))
    await bot.press("UARJUN", card)
    assert await request_status(bot, 3) == "pending"
    updated = bot.slack.message(CHANNEL, card.ts)
    validate(updated.blocks)
    assert updated.blocks[0]["text"]["text"] == "Expired"
    assert "Ask me again" in rich_said(updated.blocks[-1])
    assert not [m for m in bot.slack.messages if m.reply_broadcast]
    record = await bot.registry.card(card_id)
    assert record is not None and record.status is CardStatus.EXPIRED


async def test_tampered_token_is_refused(bot: Bot) -> None:
    """A button value that is not the signed card is refused privately and nothing runs."""
    _, card = await card_for(bot, "UARJUN")
    button = card.blocks[-1]["elements"][0]
    button["value"] = button["value"][:-4] + "AAAA"
    await bot.press("UARJUN", card)
    assert await request_status(bot, 3) == "pending"
    assert "not valid" in bot.ephemerals("UARJUN")[0]


async def test_failed_revalidation_is_shown_on_the_card(bot: Bot) -> None:
    """If the request was decided elsewhere meanwhile (here, straight in the shop's database),
    the card shows failed and why; no change."""
    _, first = await card_for(bot, "UARJUN")
    async with bot.services.db.tenant_session(1, write=True) as session:
        request = await session.get(BranchRequest, 3)
        assert request is not None
        request.status, request.decided_by, request.decided_at = "approved", 3, bot.clock()
        await session.commit()
    await bot.press("UARJUN", first)
    updated = bot.slack.message(CHANNEL, first.ts)
    assert updated.blocks[0]["text"]["text"] == "Approved, but it failed"
    assert "nothing was changed" in rich_said(updated.blocks[-1]).lower()


async def test_audit_channel_gets_a_copy(bot: Bot) -> None:
    """With COUNTERSIGN_AUDIT_CHANNEL set, the decision is also posted there."""
    bot.services.audit_channel = "C0AUDIT"
    _, card = await card_for(bot, "UARJUN")
    await bot.press("UARJUN", card)
    copies = [m for m in bot.slack.messages if m.channel == "C0AUDIT"]
    assert len(copies) == 1
    assert copies[0].text.startswith(":white_check_mark: Approved and done (Arjun Mehta):")


def _press_from_team(card: Message, user: str, team: str) -> dict[str, Any]:
    from tests.support.slack_requests import block_action

    block = card.blocks[-1]
    return block_action(
        user,
        action_id="card_approve",
        value=block["elements"][0]["value"],
        block_id=block["block_id"],
        channel=CHANNEL,
        message_ts=card.ts,
        user_team=team,
    )


async def test_a_presser_from_another_connected_workspace_of_the_merchant_counts(bot: Bot) -> None:
    """In a shared channel the presser's own team differs; it works when that team is the
    merchant's own too (connected to the same merchant)."""
    _, card = await card_for(bot, "UARJUN")
    await bot.services.directory.connections.connect(Platform.SLACK, "T0FIESTA2", 1)
    await bot.interact(_press_from_team(card, "UARJUN", "T0FIESTA2"))
    [view] = approve_modals(bot)  # the confirm, then its "Yes, approve", from the same team
    confirmed = view_submission("UARJUN", view, values={})
    confirmed["user"]["team_id"] = "T0FIESTA2"
    await bot.interact(confirmed)
    assert await request_status(bot, 3) == "approved"


async def test_a_presser_from_a_foreign_workspace_cannot_approve(bot: Bot) -> None:
    """Slack Connect: a user of an unconnected workspace pressing a card in a shared channel is
    refused, even with an identity that looks like the card's owner, and nothing runs."""
    _, card = await card_for(bot, "UARJUN")
    await bot.interact(_press_from_team(card, "UARJUN", "T0OTHERCO"))
    assert await request_status(bot, 3) == "pending"
    assert any("link you with" in text for text in bot.ephemerals("UARJUN"))


async def test_unexpected_failure_is_shown_on_the_card_in_the_channel_and_to_the_presser(
    bot: Bot,
) -> None:
    """A write that raises an exception the engine did not expect used to leave the card live
    (buttons, no audit line, presser told nothing); it is shown failed like any other failure."""
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.sandbox import BOT_TOKEN
    from bot.slack import SlackAdapter, Where
    from bot.turns.answer import post_card
    from tests.engine.toy import TOY_TOOLS
    from tools.toolsets.merchant import DEFAULT_AGENT

    bot.registry.register(next(t for t in TOY_TOOLS if t.name == "explode"))
    arjun = await bot.services.directory.resolve("slack", TEAM, "UARJUN")
    assert arjun is not None
    result = await bot.registry.call(
        DEFAULT_AGENT, "explode", {"branch_id": 1, "name": "Kaboom"}, arjun
    )
    assert result.proposal is not None
    client = AsyncWebClient(token=BOT_TOKEN, base_url=bot.slack.base_url, session=bot.http)
    adapter = SlackAdapter(client, Where(TEAM, "UARJUN", channel=CHANNEL))
    await post_card(
        bot.services, adapter, result.proposal, caller=arjun, conversation="c", installation=TEAM
    )
    [card] = bot.cards()

    assert await bot.press("UARJUN", card) == 200

    record = await bot.registry.card(result.proposal.card_id)
    assert record is not None and record.status is CardStatus.FAILED
    shown = bot.slack.message(CHANNEL, card.ts)
    assert not any(b["type"] == "actions" for b in shown.blocks)
    assert "Approved, but it failed" in str(shown.blocks)
    audit = [m.text for m in bot.slack.messages if m.channel == CHANNEL and not m.ephemeral_to]
    assert any("Approved, but it failed (Arjun Mehta)" in text for text in audit), audit
    assert any("did not go through" in text for text in bot.ephemerals("UARJUN"))


async def test_a_press_on_a_card_whose_message_is_gone_posts_it_anew(bot: Bot) -> None:
    """When chat.update answers message_not_found (the message was deleted, or a workspace lost
    it), the decided card is posted anew in its channel and its new place recorded, so the
    audit line and any later update reach a message that exists; before, the update failed,
    was logged as card_update_failed and the audit line pointed at a thread that was gone."""
    _, card = await card_for(bot, "UARJUN")
    bot.slack.workspace.messages.remove(bot.slack.message(CHANNEL, card.ts))
    assert await bot.press("UARJUN", card) == 200
    assert await request_status(bot, 3) == "approved"
    anew = [
        m
        for m in bot.slack.messages
        if m.channel == CHANNEL
        and m.blocks
        and m.blocks[0]["type"] == "header"
        and "Approved and done" in str(m.blocks[0])
    ]
    assert len(anew) == 1 and anew[0].thread_ts is None
    validate(anew[0].blocks)
    record = await bot.registry.card(card.blocks[-1]["block_id"].split("-")[1])
    assert record is not None and record.posting is not None
    assert (record.posting["ts"], record.posting["thread_ts"]) == (anew[0].ts, None)
    audit = [m for m in bot.slack.messages if m.text.startswith(":white_check_mark:")]
    assert len(audit) == 1 and audit[0].channel == CHANNEL and audit[0].thread_ts is None
