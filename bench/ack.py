"""Button acknowledgement: 200 concurrent Approve presses, time to HTTP response, vs bare bolt.

Each run proposes 200 stock adjustments as Arjun (a manager), posts their cards to the fake
Slack, then presses Approve on all of them at once through the real endpoint. The bot acks and
decides each card in the background (claim, write, audit, card update, audit line, note to the
model), so later acks compete with earlier approvals for the one event loop, as in production.
The baseline is a bolt app with an empty ``ack()`` listener, served the same way, sent the same
signed requests in the same run.
"""

from __future__ import annotations

from pathlib import Path

from tqdm import tqdm

from bench.slackbot import Request, RunningBot, client_session, fire, running_bot
from bench.stage import bare_bolt, own_target, serve, sqlite_database
from bench.stats import Figure, percentile
from bot.slack import SlackAdapter, Where
from bot.slack.blocks import APPROVE_ACTION
from bot.turns.answer import post_card
from tests.support.slack_requests import block_action
from tools import Caller, CardStatus, Role
from tools.toolsets.merchant import DEFAULT_AGENT

__all__ = ["run"]

PRESSES = 200
RUNS = 5
CHANNEL = "C0BENCH"
ARJUN = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
ADJUST = {"branch": 1, "sku": "FF-PANEER-WRAP", "delta": 1, "reason": "delivery counted"}


async def _cards(bot: RunningBot, count: int) -> list[Request]:
    """Proposes ``count`` cards, posts them, and returns a signed Approve press for each."""
    presses: list[Request] = []
    for _ in range(count):
        result = await bot.registry.call(DEFAULT_AGENT, "adjust_stock", ADJUST, ARJUN)
        proposal = result.proposal
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
        presses.append(Request.interaction(payload))
    return presses


async def _check_done(bot: RunningBot, expected: int) -> None:
    done = await bot.card_store.in_state(CardStatus.DONE)
    if len(done) != expected:
        raise RuntimeError(f"{expected} cards approved, {len(done)} done")


async def run(workdir: Path, *, runs: int = RUNS, presses: int = PRESSES) -> list[Figure]:
    p50 = Figure("ack p50 (200 presses)", "ms", "lower", note="bare bolt app, empty ack()")
    p99 = Figure(
        "ack p99 (200 presses)",
        "ms",
        "lower",
        target_ratio=1.1,
        note="bare bolt app, empty ack(); Slack's limit is 3,000 ms",
    )
    url = await sqlite_database(workdir, "ack.db")
    async with (
        client_session() as http,
        running_bot(url, http) as bot,
        serve(bare_bolt(bot.slack)) as bare_url,
    ):
        warm = await _cards(bot, 10)
        await fire(http, bot.url, warm)
        await fire(http, bare_url, warm)
        await bot.drain()
        approved = 10
        for _ in tqdm(range(runs), desc="ack", unit="run", leave=False):
            presses_now = await _cards(bot, presses)
            ours = await fire(http, bot.url, presses_now)
            await bot.drain()
            approved += presses
            await _check_done(bot, approved)
            bare = await fire(http, bare_url, presses_now)
            p50.add(percentile(ours, 50) * 1000, percentile(bare, 50) * 1000)
            p99.add(percentile(ours, 99) * 1000, percentile(bare, 99) * 1000)
    return [p50, p99]
