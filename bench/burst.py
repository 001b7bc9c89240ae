"""A burst of 1,000 events through the real endpoint of ``python -m bot serve``, offline model.

Each run sends 1,000 signed events at once: 750 @mentions at the top level of a channel (each
its own thread) and 250 direct messages (each its own DM), asking for reads the offline model
maps to tools ("show branches", "pending requests", stock, sales, help). Every one must be
acknowledged in under 3 s and answered exactly once: once the fake Slack holds one more reply
per event (``chat.postMessage`` from the bot) and every hourglass is off again, every thread or
DM must hold exactly one reply. The baseline is a bolt app whose event listeners do nothing,
served in the bench's process and sent the same 1,000 signed events in the same run.

The bot runs as production runs it (``bench.production``): ``python -m bot serve``, a process
tree of its own configured only by environment variables, once for each server of
``COUNTERSIGN_BENCH_BURST_SERVERS`` (default ``sqlite:1,sqlite:2,postgresql:2``: the database
it runs on and its ``COUNTERSIGN_WORKERS`` processes sharing the port), each on a database and
a fake Slack of its own; every run fires at each in turn, then at the baseline. Its CPU per answered event is the whole tree's. The fake Slack runs
in a process of its own (``bench.slackapi``), as Slack's servers are not in the bot's.
``COUNTERSIGN_BENCH_BURST_RUNS`` and ``COUNTERSIGN_BENCH_BURST_EVENTS`` shrink a trial; the
figure uses 5 runs of 1,000. ``COUNTERSIGN_BENCH_PROFILE=FILE`` runs the first server's parent
under cProfile (with one worker, that is the server) and writes it there when it stops.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from tqdm import tqdm

from bench.production import Served, serving
from bench.slackbot import Request, client_session, fire
from bench.stage import bare_bolt, postgres_cluster, serve
from bench.stats import Figure, percentile
from tests.support.slack_requests import event, message

__all__ = ["run"]

RUNS = int(os.environ.get("COUNTERSIGN_BENCH_BURST_RUNS", "5"))
EVENTS = int(os.environ.get("COUNTERSIGN_BENCH_BURST_EVENTS", "1000"))
# Which servers a run fires at: the database each runs on, and its worker processes.
SERVERS = tuple(
    (database, int(count))
    for database, _, count in (
        server.partition(":")
        for server in os.environ.get(
            "COUNTERSIGN_BENCH_BURST_SERVERS", "sqlite:1,sqlite:2,postgresql:2"
        ).split(",")
    )
)
_DATABASES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
DM_SHARE = 4  # one event in four is a DM
SLACK_ACK_LIMIT_S = 3.0
_WARM = 20  # events per worker before the first run: connections, caches, ``auth.test``
_ASKS = ("show branches", "pending requests", "stock at Indiranagar", "sales today", "help")
_USERS = ("UPRIYA", "UARJUN")
_ts = itertools.count(1)


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
    http: aiohttp.ClientSession, served: Served, threads: list[tuple[str, str | None]]
) -> Counter[int]:
    """How many events got 0, 1, 2… replies (the goal: all of them exactly 1)."""
    posted = await served.slack.called(http, "chat.postMessage")
    replies = Counter((call["channel"], call.get("thread_ts")) for call in posted)
    return Counter(replies[where] for where in threads)


@dataclass
class _Server:
    """One server (a database, a worker count) and its figures across the runs."""

    served: Served
    events: int
    database: str  # as the figures name it
    ack: Figure = field(init=False)
    worst: Figure = field(init=False)
    rate: Figure = field(init=False)
    once: Figure = field(init=False)
    replies: int = 0  # replies the fake Slack should hold once the bot has drained
    reacted_seen: int = 0
    lost: list[int] = field(default_factory=list[int])
    twice: list[int] = field(default_factory=list[int])
    reacted: list[int] = field(default_factory=list[int])  # hourglasses put on per run
    cpu_ms: list[float] = field(default_factory=list[float])

    def __post_init__(self) -> None:
        n = self.served.workers
        of = f"{self.database}, {n} worker" if n == 1 else f"{self.database}, {n} workers"
        self.ack = Figure(
            f"burst ack p99 ({self.events:,} events), {of}",
            "ms",
            "lower",
            digits=0,
            note="bare bolt app, empty event listeners; Slack's limit is 3,000 ms",
        )
        self.worst = Figure(
            f"burst slowest ack, {of}",
            "ms",
            "lower",
            digits=0,
            target_below=3000,
            note="every event must be acknowledged in < 3,000 ms",
        )
        self.rate = Figure(
            f"burst answered, {of}",
            "events/s",
            "higher",
            target_at_least=100,
            note="baseline: the bare app's acks/s (it answers nothing)",
        )
        self.once = Figure(f"burst answered exactly once, {of}", "events", "higher", digits=0)

    async def warm(self, http: aiohttp.ClientSession) -> None:
        warm, _ = _events(99, _WARM * self.served.workers)
        await fire(http, self.served.url, warm)
        self.replies += len(warm)
        await self.served.drained(http, replies=self.replies)
        self.reacted_seen = (await self.served.slack.counted(http, "reactions.add"))[
            "reactions.add"
        ]

    async def burst(
        self,
        http: aiohttp.ClientSession,
        requests: list[Request],
        threads: list[tuple[str, str | None]],
    ) -> tuple[list[float], float]:
        """Fires one run and waits for its answers; its acks' seconds and seconds to answer all."""
        started, cpu = time.perf_counter(), self.served.cpu_seconds()
        acks = await fire(http, self.served.url, requests)
        self.replies += len(requests)
        await self.served.drained(http, replies=self.replies)
        answered_in = time.perf_counter() - started
        self.cpu_ms.append((self.served.cpu_seconds() - cpu) * 1000 / len(requests))
        answers = await _answers(http, self.served, threads)
        reacted = (await self.served.slack.counted(http, "reactions.add"))["reactions.add"]
        self.reacted.append(reacted - self.reacted_seen)
        self.reacted_seen = reacted
        self.once.add(answers[1], len(requests))
        self.lost.append(answers[0])
        self.twice.append(sum(n for times, n in answers.items() if times > 1))
        return acks, answered_in

    def figures(self) -> list[Figure]:
        if max(self.worst.product) >= SLACK_ACK_LIMIT_S * 1000:
            self.worst.note += f"; slowest of all runs {max(self.worst.product):,.0f} ms"
        self.rate.note += (
            "; the server's process tree's CPU per answered event: "
            + ", ".join(f"{ms:.1f}" for ms in self.cpu_ms)
            + " ms"
        )
        self.once.note = (
            f"of {self.events} per run; unanswered per run: {self.lost}; answered more than "
            f"once: {self.twice}; shown working (hourglass) per run: {self.reacted}"
        )
        return [self.ack, self.worst, self.rate, self.once]


def _profile_file() -> Path | None:
    """Where ``COUNTERSIGN_BENCH_PROFILE`` asks for the profile (the server runs elsewhere)."""
    path = os.environ.get("COUNTERSIGN_BENCH_PROFILE")
    return Path(path).resolve() if path else None


async def run(
    workdir: Path,
    *,
    runs: int = RUNS,
    events: int = EVENTS,
    servers_run: tuple[tuple[str, int], ...] = SERVERS,
) -> list[Figure]:
    unknown = {database for database, _ in servers_run} - set(_DATABASES)
    if unknown:
        raise ValueError(f"COUNTERSIGN_BENCH_BURST_SERVERS: unknown database {sorted(unknown)}")
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(client_session())
        cluster = (
            stack.enter_context(postgres_cluster())
            if any(database == "postgresql" for database, _ in servers_run)
            else None
        )
        servers: list[_Server] = []
        for i, (database, count) in enumerate(servers_run):
            profiled = _profile_file() if i == 0 else None
            on = cluster if database == "postgresql" else None
            served = await stack.enter_async_context(
                serving(workdir, workers=count, cluster=on, profile=profiled)
            )
            servers.append(_Server(served, events, _DATABASES[database]))
        bare_url = await stack.enter_async_context(serve(bare_bolt(servers[0].served.slack)))
        for server in servers:
            await server.warm(http)
        await fire(http, bare_url, _events(99, _WARM)[0])
        for n in tqdm(range(runs), desc="burst", unit="run", leave=False):
            requests, threads = _events(n, events)
            ours = [await server.burst(http, requests, threads) for server in servers]
            started = time.perf_counter()
            bare = await fire(http, bare_url, requests)
            bare_in = time.perf_counter() - started
            for server, (acks, answered_in) in zip(servers, ours, strict=True):
                server.ack.add(percentile(acks, 99) * 1000, percentile(bare, 99) * 1000)
                server.worst.add(max(acks) * 1000, max(bare) * 1000)
                server.rate.add(events / answered_in, events / bare_in)
    return [figure for server in servers for figure in server.figures()]
