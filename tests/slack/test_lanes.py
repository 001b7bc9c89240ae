"""Lanes over the real endpoint: a press is decided while every model turn slot is held."""

from __future__ import annotations

import asyncio
import json

from bot.adapter import Steps, Stream
from bot.sandbox import Message
from bot.sandbox.payloads import block_action, event, form, message, view_submission
from bot.services import ModelReply
from bot.slack.blocks import APPROVE_ACTION, card_id_of_block
from tests.slack.conftest import CHANNEL, Bot, RecordingAssistant, approve_modals
from tests.slack.test_block_actions import card_for
from tests.slack.test_events import reactions_added
from tools import Caller, CardStatus

# A safety net so a broken lane fails the test instead of hanging it; nothing is timed.
_NEVER = 120.0


class StuckModel:
    """A model that answers nobody until ``release`` is set, and says when enough are waiting."""

    def __init__(self, inner: RecordingAssistant, *, full_at: int) -> None:
        self.inner, self.full_at = inner, full_at
        self.release, self.full = asyncio.Event(), asyncio.Event()
        self.waiting = 0

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> ModelReply:
        self.waiting += 1
        if self.waiting >= self.full_at:
            self.full.set()
        await self.release.wait()
        return await self.inner.reply(
            conversation=conversation, caller=caller, text=text, steps=steps, stream=stream
        )

    async def record(self, *, conversation: str, text: str) -> None:
        await self.inner.record(conversation=conversation, text=text)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _press_without_waiting(bot: Bot, user: str, card: Message) -> str:
    """Presses Approve as Slack would and returns the card id, without waiting for the work."""
    block = next(b for b in card.blocks if b.get("type") == "actions")
    button = next(e for e in block["elements"] if e["action_id"] == APPROVE_ACTION)
    payload = block_action(
        user,
        action_id=APPROVE_ACTION,
        value=button["value"],
        block_id=block["block_id"],
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread_ts,
    )
    response = await bot.post(form(payload), "application/x-www-form-urlencoded")
    assert response.status == 200
    # A channel's card asks its confirm in a modal, opened before the answer: "Yes, approve".
    [view] = approve_modals(bot)[-1:]
    confirmed = view_submission(user, view, values={})
    response = await bot.post(form(confirmed), "application/x-www-form-urlencoded")
    assert response.status == 200
    card_id = card_id_of_block(block["block_id"])
    assert card_id is not None
    return card_id


async def _finished(prefix: str) -> None:
    """Waits for the background tasks whose names start with ``prefix`` (the work just handed over)."""
    started = [t for t in asyncio.all_tasks() if t.get_name().startswith(prefix)]
    assert started, f"no task named {prefix}…"
    async with asyncio.timeout(_NEVER):
        await asyncio.wait(started)


async def test_press_is_decided_while_every_turn_slot_waits_on_the_model(bot: Bot) -> None:
    """With the turn lane full of turns stuck on the model and more queued, Approve still completes.

    Presses used to share eight slots with model turns: with 30 turns waiting on a 25 s model,
    an Approve was not shown after 40 s.
    """
    _, card = await card_for(bot, "UARJUN", "approve request 3")
    turns = bot.services.tasks.lanes["turn"]
    stuck = StuckModel(bot.assistant, full_at=turns.limit)
    bot.services.assistant = stuck
    asked = [bot.ts() for _ in range(turns.limit + 4)]
    for ts in asked:
        inner = message(
            "UPRIYA", "<@UBOT> show branches", channel=CHANNEL, ts=ts, kind="app_mention"
        )
        await bot.post(json.dumps(event(inner)), "application/json")
    async with asyncio.timeout(_NEVER):
        await stuck.full.wait()
    assert (turns.running, turns.waiting) == (turns.limit, 4)

    card_id = await _press_without_waiting(bot, "UARJUN", card)
    await _finished("approve by UARJUN")

    record = await bot.registry.card(card_id)
    assert record is not None
    assert record.status is CardStatus.DONE
    assert (turns.running, turns.waiting) == (turns.limit, 4)  # still stuck: no slot was freed
    stuck.release.set()
    await bot.settle()
    answered = {call.get("thread_ts") for call in bot.slack.called("chat.postMessage")}
    assert set(asked) <= answered


async def test_a_message_waiting_for_a_turn_slot_is_shown_typing_at_once(bot: Bot) -> None:
    """Messages queued behind a full turn lane get the hourglass at once, not after the delay."""
    bot.services.typing_after = 3600.0  # only a wait for a slot can show it within this test
    turns = bot.services.tasks.lanes["turn"]
    stuck = StuckModel(bot.assistant, full_at=turns.limit)
    bot.services.assistant = stuck
    asked = [bot.ts() for _ in range(turns.limit + 3)]
    queued = asked[turns.limit :]
    shown = reactions_added(bot, len(queued))
    for ts in asked:
        inner = message(
            "UPRIYA", "<@UBOT> show branches", channel=CHANNEL, ts=ts, kind="app_mention"
        )
        await bot.post(json.dumps(event(inner)), "application/json")
    async with asyncio.timeout(_NEVER):
        await stuck.full.wait()
        await shown.wait()

    # The turns that found a slot are with the model, under the delay: no hourglass yet.
    assert {call["timestamp"] for call in bot.slack.called("reactions.add")} == set(queued)
    assert not bot.slack.called("chat.postMessage")  # nothing answered yet: the model is stuck
    stuck.release.set()
    await bot.settle()
    assert len(bot.slack.called("reactions.remove")) == len(queued)
