"""A burst of 1,000 events through the real endpoint, answered by the offline model.

Each run sends 1,000 signed events at once: 750 @mentions at the top level of a channel (each
its own thread) and 250 direct messages (each its own DM), asking for reads the offline model
maps to tools ("show branches", "pending requests", stock, sales, help). Every one must be
acknowledged in under 3 s and answered exactly once: after the bot's background work drains,
every thread or DM holds exactly one reply (``chat.postMessage`` from the bot). The baseline is
a bolt app whose event listeners do nothing, sent the same 1,000 signed events in the same run.

The fake Slack runs in a process of its own (``bench.slackapi``), as Slack's servers are not in
the bot's; the replies are counted by asking it. ``COUNTERSIGN_BENCH_BURST_RUNS`` and
``COUNTERSIGN_BENCH_BURST_EVENTS`` shrink a trial; the figure uses 5 runs of 1,000.
"""

from __future__ import annotations

import contextlib
import cProfile
import itertools
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import aiohttp
from tqdm import tqdm

from bench.slackbot import BotApart, Request, client_session, fire, running_bot_apart
from bench.stage import bare_bolt, serve, sqlite_database
from bench.stats import Figure, percentile
from tests.support.slack_requests import event, message

__all__ = ["run"]

RUNS = int(os.environ.get("COUNTERSIGN_BENCH_BURST_RUNS", "5"))
EVENTS = int(os.environ.get("COUNTERSIGN_BENCH_BURST_EVENTS", "1000"))
DM_SHARE = 4  # one event in four is a DM
SLACK_ACK_LIMIT_S = 3.0
_ASKS = ("show branches", "pending requests", "stock at Indiranagar", "sales today", "help")
_USERS = ("UPRIYA", "UARJUN")
_ts = itertools.count(1)


@contextlib.contextmanager
def _profiled(*, first: bool) -> Iterator[None]:
    """Profiles the bot's process over the first run when ``COUNTERSIGN_BENCH_PROFILE`` names a
    file (cProfile's dump; the event loop's thread only, SQLite's threads show as waiting)."""
    path = os.environ.get("COUNTERSIGN_BENCH_PROFILE")
    if not (first and path):
        yield
        return
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        profile.dump_stats(path)


def _events(run: int, count: int) -> tuple[list[Request], list[tuple[str, str | None]]]:
    """The signed events of one run, and where each one's single answer must appear."""
    requests: list[Request] = []
    threads: list[tuple[str, str | None]] = []
    for i in range(count):
        ts, user, ask = f"1800000000.{next(_ts):06d}", _USERS[i % 2], _ASKS[i % len(_ASKS)]
        if i % DM_SHARE == 0:
            channel = f"D{run:02d}{i:05d}"
            inner = message(user, ask, channel=channel, ts=ts, channel_type="im")
            threads.append((channel, None))
        else:
            inner = message(user, f"<@UBOT> {ask}", channel="C0BURST", ts=ts, kind="app_mention")
            threads.append(("C0BURST", ts))
        requests.append(Request.event(event(inner)))
    return requests, threads


async def _answers(
    http: aiohttp.ClientSession, bot: BotApart, threads: list[tuple[str, str | None]]
) -> Counter[int]:
    """How many events got 0, 1, 2… replies (the goal: all of them exactly 1)."""
    posted = await bot.slack.called(http, "chat.postMessage")
    replies = Counter((call["channel"], call.get("thread_ts")) for call in posted)
    return Counter(replies[where] for where in threads)


async def run(workdir: Path, *, runs: int = RUNS, events: int = EVENTS) -> list[Figure]:
    ack = Figure(
        f"burst ack p99 ({events:,} events)",
        "ms",
        "lower",
        digits=0,
        note="bare bolt app, empty event listeners; Slack's limit is 3,000 ms",
    )
    worst = Figure(
        "burst slowest ack",
        "ms",
        "lower",
        digits=0,
        target_below=3000,
        note="every event must be acknowledged in < 3,000 ms",
    )
    rate = Figure(
        "burst answered",
        "events/s",
        "higher",
        target_at_least=100,
        note="baseline: the bare app's acks/s (it answers nothing)",
    )
    once = Figure("burst answered exactly once", "events", "higher", digits=0)
    lost: list[int] = []
    cpu_ms: list[float] = []
    reacted: list[int] = []  # hourglasses put on per run (messages not answered within 1 s)
    twice: list[int] = []
    url = await sqlite_database(workdir, "burst.db")
    async with (
        client_session() as http,
        running_bot_apart(url) as bot,
        serve(bare_bolt(bot.slack)) as bare_url,
    ):
        warm, _ = _events(99, 20)
        await fire(http, bot.url, warm)
        await fire(http, bare_url, warm)
        await bot.drain()
        seen_reacted = len(await bot.slack.called(http, "reactions.add"))
        for n in tqdm(range(runs), desc="burst", unit="run", leave=False):
            requests, threads = _events(n, events)
            started, cpu = time.perf_counter(), time.process_time()
            with _profiled(first=n == 0):
                ours = await fire(http, bot.url, requests)
                await bot.drain()
            answered_in = time.perf_counter() - started
            cpu_ms.append((time.process_time() - cpu) * 1000 / events)
            answers = await _answers(http, bot, threads)
            now_reacted = len(await bot.slack.called(http, "reactions.add"))
            reacted.append(now_reacted - seen_reacted)
            seen_reacted = now_reacted
            once.add(answers[1], events)
            lost.append(answers[0])
            twice.append(sum(n for times, n in answers.items() if times > 1))
            started = time.perf_counter()
            bare = await fire(http, bare_url, requests)
            bare_in = time.perf_counter() - started
            ack.add(percentile(ours, 99) * 1000, percentile(bare, 99) * 1000)
            worst.add(max(ours) * 1000, max(bare) * 1000)
            rate.add(events / answered_in, events / bare_in)
    if max(worst.product) >= SLACK_ACK_LIMIT_S * 1000:
        worst.note += f"; slowest of all runs {max(worst.product):,.0f} ms"
    rate.note += (
        "; the bot's process CPU per answered event: "
        + ", ".join(f"{ms:.1f}" for ms in cpu_ms)
        + " ms"
    )
    once.note = (
        f"of {events} per run; unanswered per run: {lost}; answered more than once: {twice}; "
        f"shown working (hourglass) per run: {reacted}"
    )
    return [ack, worst, rate, once]
