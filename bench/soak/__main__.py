"""Runs the chaos soak and prints what it found, ending with one line; exits 1 on any finding.

The line counts every check: ``soak: P presses, K kills, R database restarts, C cards: 0
executed twice, 0 lost, 0 without audit, 0 5xx, 0 live after decided, 0 unseen; card p99 S s``.
Above it, p50, p99 and max from a mention to its card and from a press to its card's update;
a card, update or copy not seen within ``SEEN_S`` is unseen, a failure like any other.

``python -m bench.soak`` (``make soak``): at least 5,000 presses by default, stopping by itself
within about ten minutes. ``--presses`` and ``--seconds`` (or ``COUNTERSIGN_SOAK_PRESSES`` and
``COUNTERSIGN_SOAK_SECONDS``) make a shorter run while developing.

A soak is a list of phases (``PHASES``), each run in turn against the same servers and
database before the checks: the chaos phase, then the MCP phase (``bench.soak.mcp``: a write
to the merchant's MCP server, the server killed mid-call each time: outcome unknown, never
done, never twice). ``COUNTERSIGN_SOAK_MCP_CARDS`` sets how many of those (20).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import random
import socket
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import asyncpg

from bench.soak.checks import Findings, check
from bench.soak.load import BIG_FROM, ROUNDS, SEEN_S, Load, play
from bench.soak.mcp import LedgerPhase, ledger_phase
from bench.soak.servers import Fleet, hold_connections, proxy, restart_database, stop_database
from bench.soak.slack import SoakSlack
from bench.stage import postgres_database, quiet_logs, scratch, settings_for
from tests.support.postgres import PostgresCluster
from tests.support.slack_requests import TEAM
from tools.db import Database
from tools.people.directory import Directory

SERVERS = 3
LANES = int(os.environ.get("COUNTERSIGN_SOAK_LANES", "16"))
SMALL_FROM = 1_001
# Slack user → (name, email): the demo's owner, managers and staff member.
PEOPLE = {
    "UPRIYA": ("Priya Raman", "priya@fiesta.example"),
    "UARJUN": ("Arjun Mehta", "arjun@fiesta.example"),
    "UMEERA": ("Meera Iyer", "meera@fiesta.example"),
    "URAVI": ("Ravi Kumar", "ravi@fiesta.example"),
}
_KILL_EVERY_S = (3.0, 7.0)
_KINDS = ("stock", "refund", "discount", "expense")
_BIG_TALLY = (3, "discount")
# Development aids: COUNTERSIGN_SOAK_FAULTS=0 runs the load alone; COUNTERSIGN_SOAK_LOGS=DIR
# keeps the servers' logs there.
_FAULTS = os.environ.get("COUNTERSIGN_SOAK_FAULTS", "1") != "0"
_LOGS = os.environ.get("COUNTERSIGN_SOAK_LOGS")
_SETTLE_S = 120.0


@dataclass
class Soak:
    """What every phase works with, and what the chaos did."""

    cluster: PostgresCluster
    dsn: str
    fleet: Fleet
    load: Load
    presses: int
    seconds: float
    workdir: Path
    restarts: int = 0
    burst: str = ""
    started: float = 0.0
    ledger: LedgerPhase | None = None

    def progress(self) -> float:
        """How far the run is: the share of its presses, or of its time, whichever is more."""
        elapsed = (time.monotonic() - self.started) / self.seconds
        return max(self.load.tally.presses / self.presses, elapsed)


Phase = Callable[[Soak], Awaitable[None]]


async def chaos(soak: Soak) -> None:
    """The load on every lane, with the kills, the database restarts and the burst."""
    started = soak.started = time.monotonic()
    stop = asyncio.Event()

    def done() -> bool:
        faulted = (soak.restarts >= 2 and bool(soak.burst)) or not _FAULTS
        enough = soak.load.tally.presses >= soak.presses and faulted
        return enough or time.monotonic() - started > soak.seconds

    async def lane() -> None:
        names, weights = list(ROUNDS), list(ROUNDS.values())
        while not stop.is_set():
            await play(soak.load, random.choices(names, weights)[0])

    lanes = [asyncio.create_task(lane()) for _ in range(LANES)]
    faults = asyncio.create_task(_faults(soak, stop) if _FAULTS else stop.wait())
    while not done():  # noqa: ASYNC110 (polls the counts the lanes keep)
        await asyncio.sleep(0.5)
    stop.set()
    await faults
    await asyncio.wait_for(asyncio.gather(*lanes), _SETTLE_S)


async def _faults(soak: Soak, stop: asyncio.Event) -> None:
    """Kills a random server every few seconds and restarts it at once (the next kill waits
    until it serves again, so two are always up); restarts the database at a third and at two
    thirds of the presses; takes every connection slot during a burst at half."""
    while not stop.is_set():
        await asyncio.sleep(random.uniform(*_KILL_EVERY_S))
        server = random.choice(soak.fleet.servers)
        await soak.fleet.kill(server)
        restart = asyncio.create_task(soak.fleet.start(server))
        share = soak.progress()
        if soak.restarts < 2 and share >= (soak.restarts + 1) / 3:
            await restart_database(soak.cluster)
            soak.restarts += 1
        if not soak.burst and share >= 0.5:
            soak.burst = await _burst(soak)
        await restart


async def _burst(soak: Soak) -> str:
    """Sixty rounds at once while every free connection slot of PostgreSQL is held for 5 s."""
    async with hold_connections(soak.cluster, leave=0) as held:
        rounds = [asyncio.create_task(play(soak.load, "solo")) for _ in range(60)]
        await asyncio.sleep(5)
    await asyncio.gather(*rounds)
    return f"60 rounds at once, {held} connection slots held for 5 s"


async def mcp(soak: Soak) -> None:
    """Payments to the merchant's MCP server, which is killed mid-call each time."""
    soak.ledger = LedgerPhase(soak.workdir)
    await ledger_phase(soak.ledger, soak.load, soak.dsn)


# The phases of a soak, in order.
PHASES: list[Phase] = [chaos, mcp]


async def _settle(soak: Soak) -> None:
    """Every server up, then waits (bounded) for nothing mid-write, every decision shown and
    every message kept in the inbox answered."""
    for server in soak.fleet.servers:
        if server.process is None:
            await soak.fleet.start(server)
    deadline = time.monotonic() + _SETTLE_S
    while time.monotonic() < deadline:
        conn = await asyncpg.connect(soak.dsn)
        try:
            left = await conn.fetchval(
                "SELECT (SELECT count(*) FROM proposals WHERE status = 'executing'"
                " OR (status NOT IN ('pending', 'executing') AND shown_at IS NULL))"
                " + (SELECT count(*) FROM inbox WHERE answered_at IS NULL)"
            )
        finally:
            await conn.close()
        if left == 0:
            return
        await asyncio.sleep(2)


async def _seed(url: str, *, small: int, big: int) -> None:
    """Requests raised by Ravi (staff) to decide: ₹100 ones, and ₹42,000 ones (two approvers).

    What a branch's requests of one kind spent within the policy's window (a day by default),
    and what its live cards would spend, count toward the two-approver amount: over a soak,
    every small request would soon need two managers. The window is one second here, and the
    small requests are spread over the other eleven of three branches and four kinds than the
    ₹42,000 ones' (a live card counts toward its tally too), so only the ₹42,000 ones do.
    """
    db = Database(url)
    try:
        directory = Directory(db)
        for user, (_name, email) in PEOPLE.items():
            await directory.link("slack", TEAM, user, email)
    finally:
        await db.dispose()
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    now = datetime.now(UTC)
    ids = range(SMALL_FROM, SMALL_FROM + small)
    rows = [(i, *_tally(i), 10_000) for i in ids if _tally(i) != _BIG_TALLY]
    rows += [(i, *_BIG_TALLY, 4_200_000) for i in range(BIG_FROM, BIG_FROM + big)]
    try:
        await conn.execute("UPDATE policies SET two_approvers_window = 1 WHERE tenant_id = 1")
        await conn.executemany(
            "INSERT INTO branch_requests (id, tenant_id, branch_id, kind, amount, requested_by,"
            " reason, status, created_at) VALUES ($1, 1, $2, $3, $4, 4, 'soak', 'pending', $5)",
            [(*row, now) for row in rows],
        )
    finally:
        await conn.close()


def _tally(request: int) -> tuple[int, str]:
    """The branch and kind of a small request: what its amount adds up with."""
    return 1 + request % 3, _KINDS[request % 4]


def _ports(n: int) -> list[int]:
    found = []
    for _ in range(n):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            found.append(int(probe.getsockname()[1]))
    return found


async def _soak(presses: int, seconds: float) -> tuple[Soak, Findings, float]:
    started = time.monotonic()
    cluster = await asyncio.to_thread(PostgresCluster.start)
    slack = SoakSlack(team_id=TEAM)
    for user, (name, email) in PEOPLE.items():
        slack.add_user(user, name, email)
    await slack.start()
    try:
        with scratch() as scratched:
            workdir = Path(_LOGS) if _LOGS else scratched
            workdir.mkdir(parents=True, exist_ok=True)
            url = await postgres_database(cluster, "soak")
            await _seed(url, small=presses * 2 + 1_000, big=presses // 3 + 200)
            settings = settings_for(
                slack, url, countersign_host="127.0.0.1", countersign_reconcile_after=5
            )
            fleet = Fleet.of(Path(workdir), settings, _ports(SERVERS))
            await asyncio.gather(*(fleet.start(s) for s in fleet.servers))
            try:
                async with (
                    proxy(fleet) as endpoint,
                    aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as http,
                ):
                    requests = (i for i in itertools.count(SMALL_FROM) if _tally(i) != _BIG_TALLY)
                    soak = Soak(
                        cluster,
                        url.replace("+asyncpg", ""),
                        fleet,
                        Load(endpoint, slack, http, requests),
                        presses,
                        seconds,
                        Path(workdir),
                    )
                    for phase in PHASES:
                        await phase(soak)
                    await _settle(soak)
            finally:
                await fleet.stop()
            ledger = (soak.ledger.db, soak.ledger.killed) if soak.ledger else None
            findings = await check(soak.dsn, slack, soak.load.tally, ledger=ledger)
    finally:
        await slack.stop()
        await asyncio.to_thread(stop_database, cluster)
    return soak, findings, time.monotonic() - started


def _report(soak: Soak, found: Findings, took: float) -> int:
    tally = soak.load.tally
    print(f"soak took {took:.0f} s; rounds {dict(tally.rounds)}; card states {dict(found.states)}")
    print(
        f"responses by status {dict(tally.statuses)}; cut off by a kill {tally.cut}; "
        f"503 with Retry-After (database down) {tally.retry_after}"
    )
    print(f"burst: {soak.burst}")
    if soak.ledger is not None:
        ledger = soak.ledger
        print(
            f"mcp: {len(ledger.cards)} payments approved of {ledger.asked} asked, "
            f"{ledger.kills} ledger kills mid-call; the cards approved "
            f"{dict(Counter(found.states_of(ledger.cards)))}, those killed mid-call "
            f"{dict(Counter(found.states_of(ledger.killed)))}"
        )
    named = {
        "executed twice": found.twice,
        "lost (a mention never answered)": found.lost,
        "answered twice": found.answered_twice,
        "without audit": found.without_audit,
        "in a state its history does not allow": found.bad_state,
        "shown done without its write, or a write not shown done": found.shown_wrong,
        "decided, yet live buttons": found.live_buttons,
        "decided, and no audit line": found.no_audit_line,
        "MCP server killed mid-call, yet not outcome unknown": found.mcp_known,
        "presses never acknowledged": tally.unacknowledged,
        "5xx": tally.server_5xx,
        f"cards (or updates) not seen within {SEEN_S:.0f} s": tally.unseen,
    }
    for what, items in named.items():
        if items:
            print(f"{len(items)} {what}:")
            for item in items[:20]:
                print(f"  {item}")
    if tally.worded:
        print(
            f"{len(tally.worded)} asks or presses answered 'send it again', no card (not silence):"
        )
        for item in tally.worded[:5]:
            print(f"  {item}")
    print(f"mention to its card: {_spread(tally.to_card)}")
    print(f"press to its card's update: {_spread(tally.to_update)}")
    # "Live after decided": a decided card not shown decided everywhere: a copy with live
    # buttons, or no audit line in its thread (each card once).
    undecided = {_card(item) for item in (*found.live_buttons, *found.no_audit_line)}
    print(
        f"soak: {tally.presses} presses, {soak.fleet.kills} kills, {soak.restarts} database "
        f"restarts, {found.cards} cards: {len(found.twice)} executed twice, {len(found.lost)} "
        f"lost, {len(found.without_audit)} without audit, {len(tally.server_5xx)} 5xx, "
        f"{len(undecided)} live after decided, {len(tally.unseen)} unseen; "
        f"card p99 {_quantile(tally.to_card, 0.99):.1f} s"
    )
    return 1 if any(named.values()) else 0


def _card(finding: str) -> str:
    return finding.split(" ", 1)[0].rstrip(":")


def _quantile(seconds: list[float], q: float) -> float:
    """The ``q`` quantile of the times (nearest rank), 0 for none."""
    if not seconds:
        return 0.0
    ranked = sorted(seconds)
    return ranked[min(len(ranked) - 1, max(0, math.ceil(q * len(ranked)) - 1))]


def _spread(seconds: list[float]) -> str:
    if not seconds:
        return "none seen"
    return (
        f"p50 {_quantile(seconds, 0.5):.2f} s, p99 {_quantile(seconds, 0.99):.2f} s, "
        f"max {max(seconds):.2f} s ({len(seconds)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    parser.add_argument(
        "--presses", type=int, default=int(os.environ.get("COUNTERSIGN_SOAK_PRESSES", "5000"))
    )
    parser.add_argument(
        "--seconds", type=float, default=float(os.environ.get("COUNTERSIGN_SOAK_SECONDS", "480"))
    )
    args = parser.parse_args()
    quiet_logs()
    soak, found, took = asyncio.run(_soak(args.presses, args.seconds))
    sys.exit(_report(soak, found, took))


if __name__ == "__main__":
    main()
