"""Approve under model load: press → card updated while 30 turns wait on a slow model, vs none.

The bot runs with a real model provider (``openai-chat:``) pointed at a scripted
OpenAI-compatible server on loopback that answers ``/v1/chat/completions`` after 25 s, as a
large hosted model can. Cards are proposed and posted beforehand (as Arjun, a manager). Each
run, in this order:

- baseline: nothing in flight; 20 Approve presses on cards posted earlier are sent at once;
- product: 30 direct messages (30 conversations) are sent and the bench waits until the model
  holds requests (turns in flight: at the model or queued for a turn slot); then 20 Approve
  presses on other cards are sent at once.

A press's time runs from just before its signed request is sent to the moment the fake Slack
receives the ``chat.update`` that shows the card decided: what the manager sees. The run then
waits for every turn to be answered once and every card to be ``done``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from pydantic import SecretStr
from pydantic_ai import models
from tqdm import tqdm

from bench.slackbot import Request, RunningBot, client_session, running_bot
from bench.stage import SIGNING_SECRET, own_target, sqlite_database
from bench.stats import Figure, percentile
from bot.slack import SlackAdapter, Where
from bot.slack.blocks import APPROVE_ACTION
from bot.turns.answer import post_card
from tests.support.slack_requests import block_action, event, message, signed
from tools import Caller, CardStatus, Role
from tools.toolsets.merchant import DEFAULT_AGENT

__all__ = ["run"]

RUNS = 3
PRESSES = 20
TURNS = 30
# The documented figure uses 25 s; COUNTERSIGN_BENCH_MODEL_DELAY shortens a trial run.
MODEL_DELAY_S = float(os.environ.get("COUNTERSIGN_BENCH_MODEL_DELAY", "25"))
CHANNEL = "C0PRESS"
ARJUN = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
ADJUST = {"branch": 1, "sku": "FF-PANEER-WRAP", "delta": 1, "reason": "delivery counted"}
_LIMIT_S = 300.0


class SlowModel:
    """An OpenAI-compatible chat completions endpoint that answers after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.received = 0
        self.holding = 0
        self._held = asyncio.Condition()

    async def completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        async with self._held:
            self.received += 1
            self.holding += 1
            self._held.notify_all()
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.holding -= 1
        return web.json_response(_completion(str(body.get("model", "slow"))))

    async def holding_at_least(self, count: int) -> None:
        async with self._held:
            await self._held.wait_for(lambda: self.holding >= count)


def _completion(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Here is what I found."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


@contextlib.asynccontextmanager
async def slow_model(delay: float) -> AsyncIterator[tuple[SlowModel, str]]:
    """The scripted model server on loopback; yields it and its ``/v1`` base URL."""
    model = SlowModel(delay)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", model.completions)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield model, f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        await runner.cleanup()


class CardUpdates:
    """When the fake Slack received each card's ``chat.update`` (by message ts)."""

    def __init__(self, bot: RunningBot) -> None:
        self.at: dict[str, float] = {}
        self._changed = asyncio.Condition()
        update: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] = bot.slack._chat_update

        async def timed(params: dict[str, Any]) -> dict[str, Any]:
            answer = await update(params)
            self.at.setdefault(str(params["ts"]), time.perf_counter())
            async with self._changed:
                self._changed.notify_all()
            return answer

        bot.slack._chat_update = timed  # type: ignore[method-assign]

    async def all_of(self, tss: list[str]) -> None:
        async with asyncio.timeout(_LIMIT_S), self._changed:
            await self._changed.wait_for(lambda: all(ts in self.at for ts in tss))


async def _cards(bot: RunningBot, count: int) -> list[tuple[str, Request]]:
    """Proposes and posts ``count`` cards; returns each card's message ts and its Approve press."""
    presses: list[tuple[str, Request]] = []
    for _ in range(count):
        proposal = (await bot.registry.call(DEFAULT_AGENT, "adjust_stock", ADJUST, ARJUN)).proposal
        assert proposal is not None
        assert proposal.card is not None
        await own_target(bot.services.db, proposal.card_id)
        adapter = SlackAdapter(bot.client, Where("T0FIESTA", "UARJUN", channel=CHANNEL))
        conversation = f"T0FIESTA:{CHANNEL}:{proposal.card_id}"
        await post_card(
            bot.services,
            adapter,
            proposal,
            caller=ARJUN,
            conversation=conversation,
            installation="T0FIESTA",
        )
        posted = bot.slack.messages[-1]
        payload = block_action(
            "UARJUN",
            action_id=APPROVE_ACTION,
            value=proposal.card,
            block_id=f"card-{proposal.card_id}-bench",
            channel=CHANNEL,
            message_ts=posted.ts,
        )
        presses.append((posted.ts, Request.interaction(payload)))
    return presses


async def _send(http: aiohttp.ClientSession, url: str, request: Request) -> None:
    headers = signed(request.body, SIGNING_SECRET, content_type=request.content_type)
    async with http.post(url, data=request.body.encode(), headers=headers) as response:
        await response.read()
        if response.status != 200:
            raise RuntimeError(f"Slack's endpoint answered {response.status}")


async def _press_all(
    http: aiohttp.ClientSession, bot: RunningBot, updates: CardUpdates, cards: list[Any]
) -> list[float]:
    """Presses every card at once; each press's seconds from sending to its card updated."""
    sent: dict[str, float] = {}

    async def press(ts: str, request: Request) -> None:
        sent[ts] = time.perf_counter()
        await _send(http, bot.url, request)

    await asyncio.gather(*(press(ts, request) for ts, request in cards))
    await updates.all_of([ts for ts, _ in cards])
    return [updates.at[ts] - sent[ts] for ts, _ in cards]


def _turns(run: int) -> tuple[list[Request], list[str]]:
    """Direct messages from Priya, each in its own DM (its own conversation)."""
    requests, channels = [], []
    for i in range(TURNS):
        channel, ts = f"D{run:02d}{i:04d}", f"1900000000.{run:02d}{i:04d}"
        inner = message(
            "UPRIYA", "how are sales looking?", channel=channel, ts=ts, channel_type="im"
        )
        requests.append(Request.event(event(inner)))
        channels.append(channel)
    return requests, channels


def _answered(bot: RunningBot, channels: list[str]) -> int:
    replied = {call["channel"] for call in bot.slack.called("chat.postMessage")}
    return sum(1 for channel in channels if channel in replied)


async def run(workdir: Path, *, runs: int = RUNS, presses: int = PRESSES) -> list[Figure]:
    p50 = Figure(
        f"press → card updated p50, {TURNS} turns on a {MODEL_DELAY_S:.0f} s model",
        "ms",
        "lower",
        note="the same presses with no turns in flight",
    )
    p99 = Figure(
        f"press → card updated p99, {TURNS} turns on a {MODEL_DELAY_S:.0f} s model",
        "ms",
        "lower",
        target_ratio=2.0,
        note=f"the same {presses} presses with no turns in flight",
    )
    url = await sqlite_database(workdir, "press_load.db")
    allowed, models.ALLOW_MODEL_REQUESTS = models.ALLOW_MODEL_REQUESTS, True  # loopback only
    try:
        async with (
            slow_model(MODEL_DELAY_S) as (model, base_url),
            client_session() as http,
            running_bot(
                url,
                http,
                countersign_model="openai-chat:slow-bench-model",
                countersign_model_base_url=base_url,
                openai_api_key=SecretStr("not-a-real-key"),
            ) as bot,
        ):
            updates = CardUpdates(bot)
            await _press_all(http, bot, updates, await _cards(bot, 5))  # warm up
            await bot.drain()
            approved = 5
            for n in tqdm(range(runs), desc="press_load", unit="run", leave=False):
                idle = await _press_all(http, bot, updates, await _cards(bot, presses))
                await bot.drain()
                loaded_cards = await _cards(bot, presses)
                requests, channels = _turns(n)
                await asyncio.gather(*(_send(http, bot.url, r) for r in requests))
                async with asyncio.timeout(_LIMIT_S):
                    await model.holding_at_least(min(TURNS, _turn_slots(bot)))
                in_flight = model.holding
                loaded = await _press_all(http, bot, updates, loaded_cards)
                still = model.holding  # the model still held turns when the last card updated
                await bot.drain()
                approved += 2 * presses
                await _check(bot, approved, channels)
                p50.add(percentile(loaded, 50) * 1000, percentile(idle, 50) * 1000)
                p99.add(percentile(loaded, 99) * 1000, percentile(idle, 99) * 1000)
                p99.note = (
                    f"the same {presses} presses with no turns in flight; at the model when "
                    f"pressed: {in_flight} (the rest queued), still there after: {still}"
                )
    finally:
        models.ALLOW_MODEL_REQUESTS = allowed
    return [p50, p99]


def _turn_slots(bot: RunningBot) -> int:
    """How many turns can be at the model at once (8 shared slots before lanes existed)."""
    lanes = getattr(bot.services.tasks, "lanes", None)
    return int(lanes["turn"].limit) if lanes is not None else 8


async def _check(bot: RunningBot, approved: int, channels: list[str]) -> None:
    done = await bot.card_store.in_state(CardStatus.DONE)
    if len(done) != approved:
        raise RuntimeError(f"{approved} cards approved, {len(done)} done")
    if _answered(bot, channels) != len(channels):
        raise RuntimeError(f"{len(channels)} turns sent, {_answered(bot, channels)} answered")
