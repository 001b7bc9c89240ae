"""The soak's servers and its faults: three ``countersign serve`` on one PostgreSQL, behind a
round-robin proxy; a server killed outright, the database restarted, its connections taken.

Everything listens on 127.0.0.1. Each server is started as production starts it (``python -m
bot serve``, configured by environment only, one process each), so SIGKILL ends it the way an
out-of-memory kill or a lost machine would. The proxy hands each request to the next server
that accepts the connection, as a load balancer does; a server killed while it held a request
cuts that request off, and the proxy says so in a header of its own (``X-Soak-Proxy``) so
the load generator can tell a cut-off request from a server's own 5xx.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import signal
import subprocess
import sys
from asyncio.subprocess import DEVNULL, Process
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import asyncpg
from aiohttp import web

from bench.production import environment
from bench.stage import serve
from bot.settings import Settings
from tests.support.postgres import PostgresCluster, _as_user

__all__ = ["CUT", "Fleet", "hold_connections", "proxy", "restart_database", "stop_database"]

# The proxy's header on a request cut off by a server killed while holding it.
CUT = "X-Soak-Proxy"
_READY_S = 90.0
_ATTEMPTS = 30


class _ExitedError(Exception):
    """The server exited before it answered ``/healthz``."""


_FORWARD_S = 30.0


@dataclass
class Server:
    """One ``countersign serve``: its port, its log and its process (None while down)."""

    index: int
    port: int
    log: Path
    process: Process | None = None
    starts: int = 0
    # Answering /healthz since its last start: only a ready server is killed again.
    ready: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Fleet:
    """The servers, started, killed and restarted; ``kills`` counts the SIGKILLs."""

    workdir: Path
    settings: Settings
    servers: list[Server] = field(default_factory=list)
    kills: int = 0
    _turn: itertools.count[int] = field(default_factory=itertools.count)

    @classmethod
    def of(cls, workdir: Path, settings: Settings, ports: list[int]) -> Fleet:
        servers = [Server(i, port, workdir / f"server-{i}.log") for i, port in enumerate(ports)]
        return cls(workdir, settings, servers)

    async def start(self, server: Server) -> None:
        """Starts the server and waits until it answers ``/healthz``; started again, as a
        process manager would, while it exits at once (the database down, say)."""
        for _attempt in range(_ATTEMPTS):
            await self._spawn(server)
            try:
                await _healthy(server)
            except _ExitedError:
                await asyncio.sleep(1.0)
                continue
            server.ready = True
            return
        raise RuntimeError(f"server {server.index} did not start; see {server.log}")

    async def _spawn(self, server: Server) -> None:
        env = environment(self.settings.model_copy(update={"port": server.port}), workers=1)
        env["PORT"] = str(server.port)
        env["PYTHONUNBUFFERED"] = "1"  # a killed server's last lines are kept
        with server.log.open("ab") as sink:
            server.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                "serve",
                cwd=self.workdir,
                env=env,
                stdin=DEVNULL,
                stdout=sink,
                stderr=sink,
            )
        server.starts += 1

    async def kill(self, server: Server) -> None:
        """SIGKILL, as a machine lost or an out-of-memory kill ends a process: no drain."""
        process = server.process
        if process is None or process.returncode is not None:
            return
        server.ready = False
        process.send_signal(signal.SIGKILL)
        await process.wait()
        server.process = None
        self.kills += 1

    async def stop(self) -> None:
        """SIGTERM to every server still up, as at the end of a deploy; waits for each."""
        for server in self.servers:
            if server.process is not None and server.process.returncode is None:
                server.process.send_signal(signal.SIGTERM)
        for server in self.servers:
            if server.process is not None:
                try:
                    await asyncio.wait_for(server.process.wait(), 150)
                except TimeoutError:
                    server.process.kill()
                    await server.process.wait()

    def up(self) -> list[Server]:
        """The servers whose process is running, in round-robin order from the next one."""
        start = next(self._turn)
        n = len(self.servers)
        ordered = [self.servers[(start + k) % n] for k in range(n)]
        return [s for s in ordered if s.process is not None and s.process.returncode is None]


async def _healthy(server: Server) -> None:
    async with aiohttp.ClientSession() as http:
        deadline = asyncio.get_running_loop().time() + _READY_S
        while asyncio.get_running_loop().time() < deadline:
            assert server.process is not None
            if server.process.returncode is not None:
                raise _ExitedError(server.index)
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with http.get(
                    f"{server.url}/healthz", timeout=aiohttp.ClientTimeout(total=5)
                ) as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.2)
    raise RuntimeError(
        f"server {server.index} did not answer /healthz within {_READY_S:.0f} s; see {server.log}"
    )


@contextlib.asynccontextmanager
async def proxy(fleet: Fleet) -> AsyncIterator[str]:
    """A round-robin proxy in front of the fleet; yields Slack's endpoint on it."""
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, force_close=True),
        timeout=aiohttp.ClientTimeout(total=_FORWARD_S),
    )

    async def forward(request: web.Request) -> web.Response:
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        for server in fleet.up():
            try:
                async with session.post(
                    f"{server.url}{request.path}", data=body, headers=headers
                ) as answer:
                    kept = {k: answer.headers[k] for k in _KEPT if k in answer.headers}
                    return web.Response(
                        status=answer.status,
                        body=await answer.read(),
                        content_type=answer.content_type,
                        headers=kept,
                    )
            except aiohttp.ClientConnectorError:
                continue  # not listening (killed, or still starting): the next one
            except (aiohttp.ClientError, TimeoutError):
                return web.Response(status=502, headers={CUT: "cut"})
        return web.Response(status=503, headers={CUT: "none up"})

    app = web.Application(client_max_size=4 * 1024 * 1024)
    app.router.add_post("/slack/events", forward)
    try:
        async with serve(app) as url:
            yield url
    finally:
        await session.close()


_HOP = frozenset({"host", "content-length", "connection", "transfer-encoding"})
# A server's answer headers the proxy passes back: when to try again.
_KEPT = frozenset({"Retry-After"})


def _pg_ctl(cluster: PostgresCluster, *args: str) -> None:
    subprocess.run(
        [str(cluster.bindir / "pg_ctl"), "-D", str(cluster.data), *args],
        check=True,
        capture_output=True,
        timeout=120,
        **_as_user(),
    )


async def restart_database(cluster: PostgresCluster) -> None:
    """``pg_ctl restart -m immediate``: every connection dropped at once, no checkpoint."""
    log = str(cluster.root / "pg_ctl.log")
    await asyncio.to_thread(
        _pg_ctl, cluster, "-l", log, "-w", "-t", "60", "restart", "-m", "immediate"
    )


def stop_database(cluster: PostgresCluster) -> None:
    """Stops the cluster however it was last started (by the helper, or by ``pg_ctl``)."""
    with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
        _pg_ctl(cluster, "-w", "stop", "-m", "fast")
    cluster.stop()


@contextlib.asynccontextmanager
async def hold_connections(cluster: PostgresCluster, *, leave: int) -> AsyncIterator[int]:
    """Takes every free connection slot of the cluster but ``leave``; yields how many it took."""
    held: list[asyncpg.Connection] = []
    dsn = cluster.url().replace("+asyncpg", "")
    try:
        while True:
            try:
                held.append(await asyncpg.connect(dsn, timeout=5))
            except (asyncpg.TooManyConnectionsError, asyncpg.CannotConnectNowError, OSError):
                break
        for conn in held[: min(leave, len(held))]:
            await conn.close()
        del held[: min(leave, len(held))]
        yield len(held)
    finally:
        for conn in held:
            with contextlib.suppress(Exception):
                await conn.close()
