"""/metrics with several worker processes: any worker's scrape reports the whole server."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from bot.runtime.metrics import METRICS, Metrics, publishing_lanes, worker_exited
from tests.support.cards import store_cards
from tools.db import Database

ROOT = Path(__file__).resolve().parents[2]
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
TURNS = ("countersign_turn_seconds_count", (("platform", "slack"),))
WAITING = ("countersign_lane_waiting", (("lane", "turn"),))
RUNNING = ("countersign_lane_running", (("lane", "press"),))
PENDING = ("countersign_cards", (("status", "pending"),))


@dataclass
class Worker:
    process: asyncio.subprocess.Process
    pid: int
    url: str
    logs: asyncio.Task[bytes]  # read on, so a full pipe never blocks the worker's logging

    async def stop(self) -> None:
        """Closes its stdin, which stops it as SIGTERM would, and waits for it to exit."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert await asyncio.wait_for(self.process.wait(), 30) == 0
        await self.logs


async def _start(shared: Path, database_url: str, *counts: int) -> Worker:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.metrics_worker",
        database_url,
        *map(str, counts),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PROMETHEUS_MULTIPROC_DIR": str(shared)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(_ready(process.stdout), 60)
    assert line, f"the worker did not start (exit {process.returncode})"
    logs = asyncio.create_task(process.stdout.read())
    return Worker(process, int(line[1]), f"http://127.0.0.1:{line[2]}/metrics", logs)


async def _ready(stdout: asyncio.StreamReader) -> list[str]:
    """The worker's ``ready PID PORT`` line, past its log lines (also on stdout)."""
    async for raw in stdout:
        if (line := raw.decode().split())[:1] == ["ready"]:
            return line
    return []


@pytest.fixture
async def workers(tmp_path: Path, database_url: str) -> AsyncIterator[tuple[Worker, Worker]]:
    """Two workers sharing one metrics directory: 3 turns, 2 waiting; 2 turns, 4 waiting, 1 press."""
    shared = tmp_path / "metrics"
    shared.mkdir()
    first, second = await asyncio.gather(
        _start(shared, database_url, 3, 2, 0), _start(shared, database_url, 2, 4, 1)
    )
    try:
        yield first, second
    finally:
        for worker in (first, second):
            if worker.process.returncode is None:
                worker.process.kill()
                await worker.process.wait()
            await worker.logs


async def _scrape(worker: Worker) -> Samples:
    async with aiohttp.ClientSession() as http, http.get(worker.url) as response:
        assert response.status == 200
        text = await response.text()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def _scrape_until(
    worker: Worker, key: tuple[str, tuple[tuple[str, str], ...]], value: float
) -> Samples:
    """Scrapes until ``key`` reads ``value``: other workers write their lanes once a second."""
    for _ in range(50):
        samples = await _scrape(worker)
        if samples.get(key) == value:
            break
        await asyncio.sleep(0.2)
    return samples


@pytest.mark.slow
async def test_a_scrape_of_either_worker_reports_the_whole_server(
    workers: tuple[Worker, Worker], db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turns sum over all workers, lanes over live ones, cards are one fresh count (both workers)."""
    first, second = workers
    samples = await _scrape_until(first, WAITING, 6)
    assert (samples.get(TURNS), samples.get(WAITING), samples.get(RUNNING)) == (5, 6, 1)
    assert samples[("countersign_turn_seconds_sum", (("platform", "slack"),))] == 5.0
    before = (await _scrape(second))[PENDING]
    await store_cards(db, "pending", first=0xF00)
    samples = await _scrape(first)
    assert samples[PENDING] == before + 1
    assert [key for key in samples if key[0] == "countersign_cards" and "pending" in str(key)] == [
        PENDING
    ]
    await second.stop()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "metrics"))
    worker_exited(second.pid)
    samples = await _scrape(first)
    assert (samples.get(TURNS), samples.get(WAITING), samples.get(RUNNING)) == (5, 2, 0)
    await first.stop()


def test_an_exited_worker_is_nothing_to_drop_with_one_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without PROMETHEUS_MULTIPROC_DIR one process serves: worker_exited does nothing, no error."""
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    worker_exited(12345)


def test_a_supervisor_can_name_the_shared_directory_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A supervisor that gave the directory only to its workers' environment still drops their gauges."""
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    for name in ("gauge_livesum_4242.db", "gauge_livemostrecent_4242.db", "histogram_4242.db"):
        (tmp_path / name).write_bytes(b"")
    worker_exited(4242, directory=str(tmp_path))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["histogram_4242.db"]


async def test_a_shared_directory_set_too_late_stops_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set after prometheus_client's import, the variable would show one worker as the server: refused."""
    app = web.Application()
    app[METRICS] = Metrics()
    app.cleanup_ctx.append(publishing_lanes)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    runner = web.AppRunner(app)
    with pytest.raises(RuntimeError, match="set after prometheus_client was imported"):
        await runner.setup()
    await runner.cleanup()
