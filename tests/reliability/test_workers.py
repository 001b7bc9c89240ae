"""`countersign serve --workers 2`: one port, two processes sharing the work, stopped as one."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from prometheus_client.parser import text_string_to_metric_families

from bot.sandbox import WebApi as FakeSlack
from tests.reliability.harness import (
    CHANNEL,
    ServeProcess,
    link_everyone,
    signed_event,
    wait_until,
)
from tests.support.slack_requests import message
from tools import McpTokens
from tools.db import Database

pytestmark = [pytest.mark.slow]

_EVENTS = 60
_MCP_CALLS = 30


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    # A new connection per request, as Slack's deliveries arrive: each is accepted by one worker.
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        yield session


async def _two_workers(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> ServeProcess:
    await link_everyone(db)
    # TMPDIR: the metrics directory `serve` makes lands in the test's own folder, so a server
    # killed outright (which cannot remove it) leaves nothing behind.
    workers: dict[str, str | None] = {"COUNTERSIGN_WORKERS": "2", "TMPDIR": str(tmp_path)}
    served = ServeProcess(database_url, slack, tmp_path, overrides=workers)
    await served.start(http)
    await wait_until(lambda: _served_by_both(served), what="both workers serving")
    return served


def _workers_of(served: ServeProcess) -> list[int]:
    assert served.process is not None
    pid = served.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in children]


async def _served_by_both(served: ServeProcess) -> bool:
    return sum(line.get("event") == "serving" for line in _log_lines(served)) >= 2


def _log_lines(served: ServeProcess) -> list[dict[str, object]]:
    """Every whole JSON line the server wrote, parsed. One that starts as JSON and does not
    parse, or text with JSON inside it, is two workers' lines run together: the test fails.
    (Other text is a library's: a warning, a traceback's lines.)"""
    text = served.log.read_text()
    whole = text[: text.rfind("\n") + 1]  # a worker may be halfway through its next line
    lines = []
    for raw in whole.splitlines():
        try:
            lines.append(json.loads(raw))
        except json.JSONDecodeError:
            assert not raw.startswith("{") and '{"' not in raw, f"lines run together: {raw!r}"
    return lines


async def _turns_counted(served: ServeProcess, http: aiohttp.ClientSession) -> float:
    async with http.get(f"{served.url}/metrics") as response:
        assert response.status == 200
        exposition = await response.text()
    return sum(
        sample.value
        for family in text_string_to_metric_families(exposition)
        for sample in family.samples
        if sample.name == "countersign_turn_seconds_count"
    )


async def test_two_workers_share_a_burst_and_answer_each_message_once(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """60 mentions at once on one port: both workers answer some, each thread gets one reply,
    any worker's /metrics counts all 60; SIGTERM then stops both cleanly and `serve` exits 0."""
    served = await _two_workers(db, database_url, slack, http, tmp_path)
    try:
        workers = _workers_of(served)
        assert len(workers) == 2
        threads = [f"1800000000.{i:06d}" for i in range(1, _EVENTS + 1)]
        # A connection each, as 60 people's Slack deliveries arrive: over the session's
        # kept-alive connections a loaded machine sent the whole burst down one, to one worker.
        burst = aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True))
        sent = [
            served.post(
                burst,
                *signed_event(
                    message(
                        "UARJUN",
                        "<@UBOT> show branches",
                        channel=CHANNEL,
                        ts=ts,
                        kind="app_mention",
                    )
                ),
            )
            for ts in threads
        ]
        try:
            assert await asyncio.gather(*sent) == [200] * _EVENTS
        finally:
            await burst.close()

        def replies() -> Counter[str]:
            return Counter(m.thread_ts or "" for m in slack.messages if m.thread_ts in threads)

        async def all_answered() -> bool:
            return len(replies()) == _EVENTS

        await wait_until(all_answered, what="every mention answered")
        await asyncio.sleep(0.5)  # a second answer to any thread would have arrived by now
        assert set(replies().values()) == {1}

        def answered_by() -> Counter[object]:
            lines = _log_lines(served)
            return Counter(line.get("worker") for line in lines if line.get("event") == "answered")

        async def all_logged() -> bool:
            # A worker logs "answered" just after its reply reached Slack.
            return sum(answered_by().values()) == _EVENTS

        await wait_until(all_logged, what="every answer in the workers' logs")
        assert set(answered_by()) == set(workers), answered_by()

        # Whichever worker answers a scrape, it counts every worker's turns (each turn is
        # counted just after its reply is posted, hence the wait for the first).
        async def all_counted() -> bool:
            return await _turns_counted(served, http) == _EVENTS

        await wait_until(all_counted, what="every turn counted in /metrics")
        for _ in range(6):
            assert await _turns_counted(served, http) == _EVENTS
    finally:
        served.stop()
    assert served.process is not None
    assert served.process.returncode == 0, served.log.read_text()[-3000:]
    assert all(not Path(f"/proc/{pid}").exists() for pid in workers)
    stopped = [line for line in _log_lines(served) if line.get("event") == "workers_stopped"]
    assert stopped and stopped[-1]["statuses"] == [0, 0]


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_a_worker_that_dies_stops_the_server_and_says_so(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """A worker killed from outside: the other is stopped and `serve` fails with one line naming it.

    (The database plays no part in this, so it runs on one.)
    """
    served = await _two_workers(db, database_url, slack, http, tmp_path)
    assert served.process is not None
    try:
        first, second = _workers_of(served)
        os.kill(first, signal.SIGKILL)
        await asyncio.to_thread(served.process.wait, 60)
    finally:
        served.stop()
    assert served.process.returncode == 1
    log = served.log.read_text()
    assert f"countersign: worker {first} stopped on its own (killed by signal 9)" in log
    assert not Path(f"/proc/{second}").exists()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_a_worker_that_fails_to_stop_cleanly_fails_the_stop(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """SIGTERM to `serve`, and one worker dies instead of draining: `serve` exits 1 naming it,
    so the process manager learns that work in flight may have been cut short."""
    served = await _two_workers(db, database_url, slack, http, tmp_path)
    assert served.process is not None
    first, second = _workers_of(served)
    os.kill(first, signal.SIGSTOP)  # frozen, it cannot act on the SIGTERM to come
    try:
        served.process.send_signal(signal.SIGTERM)

        async def second_stopped() -> bool:
            return _gone(second)

        await wait_until(second_stopped, seconds=60, what="the other worker stopped")
        os.kill(first, signal.SIGKILL)
        await asyncio.to_thread(served.process.wait, 60)
    finally:
        served.kill()
    assert served.process.returncode == 1
    log = served.log.read_text()
    assert f"countersign: worker {first} did not stop cleanly (killed by signal 9)" in log


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_a_stop_while_the_workers_start_is_a_clean_stop(
    db: Database, database_url: str, slack: FakeSlack, tmp_path: Path
) -> None:
    """SIGTERM as soon as both workers exist, before they can have set up their own handling
    of it: they end by that signal, which is how a worker with nothing started stops, so
    `serve` still exits 0."""
    await link_everyone(db)
    overrides: dict[str, str | None] = {"COUNTERSIGN_WORKERS": "2", "TMPDIR": str(tmp_path)}
    served = ServeProcess(database_url, slack, tmp_path, overrides=overrides)
    process = served.launch()
    try:

        async def both_started() -> bool:
            return len(_workers_of(served)) == 2

        await wait_until(both_started, seconds=60, what="both workers started")
        process.send_signal(signal.SIGTERM)
        await asyncio.to_thread(process.wait, 60)
    finally:
        served.kill()
    assert process.returncode == 0, served.log.read_text()[-3000:]


def _gone(pid: int) -> bool:
    """Exited: no such process, or one waiting only to be reaped (a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_workers_stop_by_themselves_when_the_server_is_killed_outright(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """SIGKILL to `serve` alone (a process manager that signals only it): both workers stop
    within seconds, and a new server gets the port."""
    served = await _two_workers(db, database_url, slack, http, tmp_path)
    workers = _workers_of(served)
    served.kill()

    async def both_gone() -> bool:
        return all(_gone(pid) for pid in workers)

    await wait_until(both_gone, seconds=60, what="both workers stopped")
    again = ServeProcess(database_url, slack, tmp_path, name="again", port=served.port)
    try:
        await again.start(http)
    finally:
        again.stop()


async def test_two_workers_answer_one_mcp_clients_calls(
    db: Database, database_url: str, slack: FakeSlack, http: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """/mcp keeps no session: one client's calls, each on a new connection, are answered by
    both workers, and every answer is right whichever worker gave it."""
    served = await _two_workers(db, database_url, slack, http, tmp_path)
    try:
        workers = _workers_of(served)
        token, _ = await McpTokens(db).create(1, 2, name="Job")
        # A new connection per request: each is accepted by one worker or the other.
        fresh = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"},
            limits=httpx2.Limits(max_keepalive_connections=0),
        )
        async with (
            fresh,
            Client(streamable_http_client(f"{served.url}/mcp", http_client=fresh)) as client,
        ):
            listed = await client.list_tools()
            answers = [await client.call_tool("list_branches", {}) for _ in range(_MCP_CALLS)]
        assert "list_branches" in {tool.name for tool in listed.tools}
        assert all(
            not a.is_error and "Whitefield" in json.dumps(a.structured_content) for a in answers
        )

        def called_by() -> Counter[object]:
            lines = _log_lines(served)
            return Counter(line.get("worker") for line in lines if line.get("event") == "mcp_call")

        async def all_logged() -> bool:
            return sum(called_by().values()) == _MCP_CALLS

        await wait_until(all_logged, what="every MCP call in the workers' logs")
        assert set(called_by()) == set(workers), called_by()
    finally:
        served.stop()
