"""Runs the bot as production does: ``python -m bot serve``, a process tree of its own; never in ours.

The server is started the way a process manager starts it: configured only by environment
variables (``bot.settings``), on a free loopback port, with ``COUNTERSIGN_WORKERS`` worker
processes, in a scratch directory so no ``.env`` is read. Its database is migrated, seeded and
its people linked beforehand; its Slack is the fake in a process of its own
(``bench.stage.slack_apart``). Since its work is not in the bench's process, "drained" is what
Slack would see: every reply posted and every hourglass taken off again; and its CPU is the sum
over its whole process tree (the parent and every worker), read from ``/proc``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from asyncio.subprocess import DEVNULL, Process
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from pydantic import SecretStr

from bench.stage import (
    PEOPLE,
    SlackApart,
    postgres_database,
    settings_for,
    slack_apart,
    sqlite_database,
)
from bot.settings import Settings
from tests.support.postgres import PostgresCluster
from tests.support.slack_requests import TEAM
from tools.db import Database
from tools.people.directory import Directory

__all__ = ["Served", "serving", "tree_cpu_seconds"]

_START_LIMIT_S = 120.0  # imports, migrations checked, N workers started on a shared machine
_DRAIN_LIMIT_S = 300.0
_STOP_LIMIT_S = (
    150.0  # the workers drain their work first (``bot.runtime.workers`` allows each 120 s)
)
_POLL_S = 0.05
_REPLY, _ON, _OFF = "chat.postMessage", "reactions.add", "reactions.remove"
# The server reads every setting from its environment. Ours is passed on without them, then the
# bench's settings are added: one the bench's shell sets but ``settings_for`` unsets (a
# SLACK_APP_TOKEN, say) must not reach the server under test.
_OURS = frozenset(name.upper() for name in Settings.model_fields) | {"COUNTERSIGN_WORKERS"}
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Served:
    """The running server: its fake Slack, Slack's endpoint on it, and its process tree."""

    slack: SlackApart
    url: str
    workers: int
    process: Process
    log: Path

    def cpu_seconds(self) -> float:
        """CPU (user + system) the server's whole process tree has used so far."""
        return tree_cpu_seconds(self.process.pid)

    async def drained(self, http: aiohttp.ClientSession, *, replies: int) -> None:
        """Waits (bounded) until the fake Slack holds ``replies`` replies and no hourglass is left.

        Raises ``RuntimeError`` naming how far it got if that never happens, or if the server
        stopped.
        """
        counts: dict[str, int] = {}
        try:
            async with asyncio.timeout(_DRAIN_LIMIT_S):
                while not _settled(counts, replies):
                    self._check_alive()
                    await asyncio.sleep(_POLL_S)
                    counts = await self.slack.counted(http, _REPLY, _ON, _OFF)
        except TimeoutError:
            raise RuntimeError(
                f"the server posted {counts.get(_REPLY, 0):,} of {replies:,} replies "
                f"(hourglasses on {counts.get(_ON, 0):,}, off {counts.get(_OFF, 0):,}) "
                f"in {_DRAIN_LIMIT_S:.0f} s; the end of its log:\n{_tail(self.log)}"
            ) from None

    def _check_alive(self) -> None:
        if self.process.returncode is not None:
            raise RuntimeError(
                f"the server stopped (exit status {self.process.returncode}); "
                f"the end of its log ({self.log}):\n{_tail(self.log)}"
            )


def _settled(counts: dict[str, int], replies: int) -> bool:
    # An hourglass still on means its turn's last Slack call is still to come.
    return counts.get(_REPLY, 0) >= replies and counts.get(_ON, 0) == counts.get(_OFF, 0)


@contextlib.asynccontextmanager
async def serving(
    workdir: Path,
    *,
    workers: int,
    cluster: PostgresCluster | None = None,
    profile: Path | None = None,
) -> AsyncIterator[Served]:
    """``python -m bot serve`` with ``workers`` workers, on a database of its own: a SQLite file
    in ``workdir``, or a database on ``cluster`` (PostgreSQL, as production runs) when given.

    ``profile``: the parent process runs under cProfile, written there when it stops (with one
    worker, the parent is the server; with more, it only supervises).
    """
    name = f"serve_{'postgresql' if cluster else 'sqlite'}_{workers}"
    home = workdir / name
    home.mkdir()
    database_url = (
        await postgres_database(cluster, name)
        if cluster is not None
        else await sqlite_database(home, "countersign.db")
    )
    await _link_people(database_url)
    async with slack_apart() as slack:
        port = _free_port()
        settings = settings_for(slack, database_url, countersign_host="127.0.0.1", port=port)
        log = home / "server.log"
        with log.open("wb") as sink:
            profiled = ("-m", "cProfile", "-o", str(profile)) if profile else ()
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                *profiled,
                "-m",
                "bot",
                "serve",
                cwd=home,
                env=environment(settings, workers=workers),
                stdin=DEVNULL,
                stdout=sink,
                stderr=sink,
            )
        served = Served(slack, f"http://127.0.0.1:{port}/slack/events", workers, process, log)
        try:
            await _ready(served, f"http://127.0.0.1:{port}/healthz")
            yield served
        finally:
            await _stop(served)


def environment(settings: Settings, *, workers: int) -> dict[str, str]:
    """The server's environment: ours without any setting, plus the settings of ``settings``.

    Only the settings that were set are passed (``settings_for``'s, the host and the port, and
    any the bench's own environment sets, as the benches in its process get them); the rest
    keep the defaults production has. ``COUNTERSIGN_WORKERS`` is passed as is.
    """
    env = {name: value for name, value in os.environ.items() if name.upper() not in _OURS}
    for name in settings.model_fields_set:
        value = getattr(settings, name)
        if value is None:
            continue  # unset, as in production (an empty variable is not the same)
        env[name.upper()] = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
    env["COUNTERSIGN_WORKERS"] = str(workers)
    return env


async def _link_people(database_url: str) -> None:
    """Links the bench's Slack people to the demo's, as ``countersign link`` would."""
    db = Database(database_url)
    try:
        directory = Directory(db)
        for user, (_name, email) in PEOPLE.items():
            await directory.link("slack", TEAM, user, email)
    finally:
        await db.dispose()


def _free_port() -> int:
    # Closed before the server binds it: another process could take it in between, and the
    # server would then fail to start with a message saying so, which ``_ready`` shows.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _ready(served: Served, health_url: str) -> None:
    """Waits until ``/healthz`` answers 200 and every worker has logged that it is serving.

    A worker still starting would take no connection of the warm-up, and its first turns
    (``auth.test``, lazy imports, cold statement caches) would land in a measured run.
    """
    async with aiohttp.ClientSession() as http:
        try:
            async with asyncio.timeout(_START_LIMIT_S):
                while not (await _healthy(http, health_url) and _serving(served) >= served.workers):
                    served._check_alive()
                    await asyncio.sleep(0.2)
        except TimeoutError:
            # One of several serving is what a ``countersign serve`` that does not read
            # COUNTERSIGN_WORKERS gives.
            raise RuntimeError(
                f"the server was not ready within {_START_LIMIT_S:.0f} s "
                f"({_serving(served)} of {served.workers} workers serving; does this "
                f"`countersign serve` start COUNTERSIGN_WORKERS workers?); the end of its "
                f"log ({served.log}):\n{_tail(served.log)}"
            ) from None


async def _healthy(http: aiohttp.ClientSession, url: str) -> bool:
    try:
        async with http.get(url) as response:
            return response.status == 200
    except aiohttp.ClientError:
        return False  # not listening yet


def _serving(served: Served) -> int:
    """How many processes have logged ``serving`` (``bot.server.serve``, one per worker)."""
    return served.log.read_text(errors="replace").count('"event": "serving"')


async def _stop(served: Served) -> None:
    """SIGTERM, as a process manager stops it; the tree must end, and the parent exit 0."""
    process = served.process
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    try:
        async with asyncio.timeout(_STOP_LIMIT_S):
            await process.wait()
    except TimeoutError:
        for pid in _tree(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await process.wait()
        raise RuntimeError(
            f"the server did not stop within {_STOP_LIMIT_S:.0f} s of SIGTERM; killed"
        ) from None
    if process.returncode != 0:
        # Reported, not raised: a failure already on its way out must not be hidden by this.
        print(
            f"the server exited with status {process.returncode} on SIGTERM; "
            f"the end of its log ({served.log}):\n{_tail(served.log)}",
            file=sys.stderr,
        )


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _stat(pid: str) -> tuple[int, float] | None:
    """A process's parent and its CPU seconds (its own, plus its children it has reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name (field 2) may hold spaces and parentheses: split after it.
            fields = stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None  # ended while we looked
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(tick) for tick in fields[11:15])
    return ppid, (utime + stime + cutime + cstime) / _TICKS


def _processes() -> dict[int, tuple[int, float]]:
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(entry)) is not None:
            stats[int(entry)] = stat
    return stats


def _tree(root: int, stats: dict[int, tuple[int, float]] | None = None) -> list[int]:
    """``root`` and every process descended from it."""
    stats = stats if stats is not None else _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _cpu) in stats.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            found.append(pid)
            todo.extend(children.get(pid, []))
    return found


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds used by ``root`` and all its descendants, those that ended and were reaped
    included (through their parent's children's time), so the difference of two readings is
    what the tree used in between."""
    stats = _processes()
    return sum(stats[pid][1] for pid in _tree(root, stats))
