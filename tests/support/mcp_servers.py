"""Fixtures that start the MCP servers Countersign talks to: the ledger, the hostile server, npm's filesystem server.

A stdio fixture returns the command line (the client starts the process and owns it); an HTTP
fixture starts the server on a free loopback port, waits until it answers, returns its URL and
kills it at teardown, whether the test passed or not. The HTTP servers and their state are
module-scoped, so a test file starts each once: tests in a file share its ledger, so each uses
keys of its own. Nothing listens beyond 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.support import mcp_hostile

__all__ = [
    "FILESYSTEM_SERVER",
    "HostileState",
    "filesystem_command",
    "filesystem_root",
    "filesystem_stdio",
    "held",
    "hostile_command",
    "hostile_http",
    "hostile_state",
    "hostile_stdio",
    "ledger_command",
    "ledger_db",
    "ledger_http",
    "ledger_stdio",
    "payments_with_key",
    "serving_http",
]

REPO = Path(__file__).resolve().parents[2]
HOSTILE = Path(mcp_hostile.__file__).resolve()
# Installed by `make deps` (.ci/system-deps) from tests/mcp_servers/package-lock.json.
FILESYSTEM_SERVER = (
    REPO / "tests/mcp_servers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
)
_STARTUP_SECONDS = 30.0


def ledger_command(db: Path) -> list[str]:
    return [sys.executable, "-m", "ledger", "--db", str(db)]


def hostile_command(state: Path) -> list[str]:
    return [sys.executable, str(HOSTILE), "--state", str(state)]


def filesystem_command(root: Path) -> list[str]:
    if not FILESYSTEM_SERVER.exists():
        pytest.fail(
            "npm's @modelcontextprotocol/server-filesystem is not installed: run `make deps`"
            " (it runs `npm ci --prefix tests/mcp_servers`)."
        )
    return ["node", str(FILESYSTEM_SERVER), str(root)]


def payments_with_key(db: Path, key: str) -> int:
    """How many payments the ledger file holds under this idempotency key."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(
            conn.execute(
                "SELECT COUNT(*) FROM payments WHERE idempotency_key = ?", (key,)
            ).fetchone()[0]
        )


@asynccontextmanager
async def held(client: Client) -> AsyncIterator[Client]:
    """Keeps ``client`` connected in a task of its own while the block runs.

    For an async fixture: pytest-asyncio sets a fixture up and tears it down in different
    tasks, and the client's task group then fails to close ("Attempted to exit cancel scope in
    a different task than it was entered in").
    """
    ready, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with client:
            ready.set()
            await release.wait()

    task = asyncio.create_task(hold())
    waiting = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiting.cancel()
        task.result()  # raises why it could not connect
    try:
        yield client
    finally:
        release.set()
        await task


@dataclass(frozen=True)
class HostileState:
    """The hostile server's state directory: its call log and its switches."""

    path: Path

    def calls(self, tool: str | None = None) -> list[Mapping[str, Any]]:
        """The calls it received, oldest first (only those of ``tool`` when named)."""
        calls = mcp_hostile.read_calls(self.path)
        return [call for call in calls if tool is None or call["tool"] == tool]

    def claim_read_only(self, on: bool) -> None:
        """Makes ``set_flag`` claim ``readOnlyHint: true`` (on) or tell the truth (off)."""
        self._switch(mcp_hostile.READ_ONLY, on)

    def show_appearing(self, on: bool) -> None:
        """Lists ``appearing_tool`` and ``appearing_lookup`` (on) or hides them (off)."""
        self._switch(mcp_hostile.APPEARING, on)

    def _switch(self, name: str, on: bool) -> None:
        if on:
            (self.path / name).touch()
        else:
            (self.path / name).unlink(missing_ok=True)


@contextmanager
def serving_http(command: Sequence[str], *, log: Path) -> Iterator[str]:
    """Runs ``command --http`` on a free loopback port until the block ends; yields its /mcp URL.

    The server's output goes to ``log``; a server that exits before it answers fails the test
    with that output. It is killed (its whole process group) however the block ends.
    """
    port = _free_port()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [*command, "--http", "--host", "127.0.0.1", "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=REPO,
            start_new_session=True,
        )
        try:
            _wait_until_listening(process, port, log)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            _stop(process)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + _STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"The MCP server exited ({process.returncode}) before it answered:\n{log.read_text()}"
            )
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            time.sleep(0.05)
        else:
            return
    pytest.fail(
        f"The MCP server did not listen on port {port} within {_STARTUP_SECONDS} s:\n{log.read_text()}"
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def ledger_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger file of this test module's own (created and seeded by the first server)."""
    return tmp_path_factory.mktemp("ledger") / "ledger.db"


@pytest.fixture(scope="module")
def ledger_stdio(ledger_db: Path) -> list[str]:
    """The command line that serves the module's ledger over stdio."""
    return ledger_command(ledger_db)


@pytest.fixture(scope="module")
def ledger_http(ledger_db: Path) -> Iterator[str]:
    """The URL of the module's ledger served over streamable HTTP."""
    with serving_http(ledger_command(ledger_db), log=ledger_db.with_suffix(".log")) as url:
        yield url


@pytest.fixture(scope="module")
def hostile_state(tmp_path_factory: pytest.TempPathFactory) -> HostileState:
    """The module's hostile server state: its call log and switches, all off."""
    return HostileState(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def hostile_stdio(hostile_state: HostileState) -> list[str]:
    """The command line that serves the hostile server over stdio."""
    return hostile_command(hostile_state.path)


@pytest.fixture(scope="module")
def hostile_http(hostile_state: HostileState) -> Iterator[str]:
    """The URL of the hostile server over streamable HTTP (restarted for each module)."""
    command = hostile_command(hostile_state.path)
    with serving_http(command, log=hostile_state.path / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def filesystem_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one directory the filesystem server may touch."""
    return tmp_path_factory.mktemp("files")


@pytest.fixture(scope="module")
def filesystem_stdio(filesystem_root: Path) -> list[str]:
    """The command line of npm's reference filesystem server, allowed ``filesystem_root`` only."""
    return filesystem_command(filesystem_root)
