"""Serves from several worker processes sharing one listening socket; never answers a request itself.

One Python process runs on one core. ``countersign serve --workers N`` (or ``COUNTERSIGN_WORKERS``)
binds ``COUNTERSIGN_HOST``:``PORT`` here, then starts N copies of ``countersign serve`` that are
handed that socket. Each new connection goes to whichever worker accepts it first, so a busy
worker takes fewer.

Everything the workers must agree on lives in the database, as it does for several machines
behind a load balancer:

- a delivery is claimed once (``receipts``);
- a card is claimed once;
- the sweeps decide each card by a conditional UPDATE;
- a turn's history is appended after whatever another turn saved;
- one thread's turns run one at a time (``bot.runtime.turn_order``).

What stays per worker: the lanes, so the turn and press limits apply to each worker.

``/metrics`` sums every worker (``bot.runtime.metrics``), through a fresh directory of metric files this
process creates, hands over in ``PROMETHEUS_MULTIPROC_DIR`` and removes at the end (a directory
left from an earlier run would add its counts to this one's).

SIGTERM or Ctrl-C here stops every worker, also while they are starting; each finishes its work
in flight first; one that fails to (killed, or an error while draining) makes ``serve`` fail.
A worker that ends on its own stops the others too, and ``serve`` fails, so the process
manager restarts the whole server rather than leaving it short of a worker. Should this
process be killed outright, each worker notices within a second and stops as if told to.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import tempfile
from asyncio.subprocess import Process
from collections.abc import Iterator

import structlog

from bot.runtime.metrics import worker_exited

__all__ = ["LISTEN_BACKLOG", "WorkerEndedError", "listening", "serve_workers", "watch_parent"]

log = structlog.get_logger("bot.runtime.workers")

# Connections the kernel holds until a worker accepts them. A burst of Slack deliveries arrives
# at once; with the usual 128, the rest were dropped and retried by the sender a second later,
# which pushed their acknowledgement towards Slack's 3 s limit.
LISTEN_BACKLOG = 1024
_PARENT_CHECK_S = 1.0  # how soon a worker notices its supervisor is gone
# Each worker drains its own work first (``bot.server``); this bounds the whole stop.
_STOP_LIMIT_S = 120.0


class WorkerEndedError(RuntimeError):
    """A worker ended while the server was meant to be running."""


def listening(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` and listening; raises ``OSError`` if taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_workers(sock: socket.socket, count: int) -> None:
    """Runs ``count`` workers on ``sock`` until SIGTERM/SIGINT, then stops them all.

    Raises ``WorkerEndedError`` when a worker ended on its own (the others are stopped first),
    or when one did not stop cleanly once asked to.
    """
    stop = _stop_on_signals()  # before the first worker: a stop while starting is kept too
    with _metrics_directory() as metrics_dir:
        workers: list[Process] = []
        try:
            for _ in range(count):
                if stop.is_set():
                    break
                workers.append(await _start(sock, metrics_dir))
            sock.close()  # the workers hold it now; nothing here accepts
            log.info("workers_started", workers=[w.pid for w in workers])
            ended = await _first_end(workers, stop)
        finally:
            # Also when starting one failed or this task was cancelled: no worker outlives us.
            await _stop(workers)
            for worker in workers:
                worker_exited(worker.pid, directory=metrics_dir)
    if ended is not None:
        raise WorkerEndedError(
            f"worker {ended.pid} stopped on its own ({_how(ended.returncode)}), so every "
            "worker was stopped; see the log for why, then start the server again."
        )
    unclean = next((w for w in workers if not _stopped_cleanly(w.returncode)), None)
    if unclean is not None:
        # Killed, or failed while draining: work it had in flight may have been cut short.
        raise WorkerEndedError(
            f"worker {unclean.pid} did not stop cleanly ({_how(unclean.returncode)}); "
            "see the log for what it was doing."
        )


def _stopped_cleanly(status: int | None) -> bool:
    """0, or ended by the stop signal itself: a worker still starting has no handler for it
    yet (nor any work), and Ctrl-C reaches every worker of the terminal's process group."""
    interrupted = 128 + signal.SIGINT  # the CLI's exit status on Ctrl-C
    return status in (0, -signal.SIGTERM, -signal.SIGINT, interrupted)


def _how(status: int | None) -> str:
    if status is not None and status < 0:
        return f"killed by signal {-status}"
    return f"exit status {status}"


def _stop_on_signals() -> asyncio.Event:
    """An event SIGTERM or SIGINT sets; the handlers stay until the loop closes (a repeat of
    either during the stop changes nothing)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return stop


async def _start(sock: socket.socket, metrics_dir: str) -> Process:
    fd = sock.fileno()
    env = {**os.environ, "COUNTERSIGN_WORKERS": "1", "PROMETHEUS_MULTIPROC_DIR": metrics_dir}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "serve", "--listen-fd", str(fd), env=env, pass_fds=(fd,)
    )


async def _first_end(workers: list[Process], stop: asyncio.Event) -> Process | None:
    """Waits for a stop signal (None) or for a worker to end by itself (that worker)."""
    if stop.is_set():
        return None
    stopping = asyncio.create_task(stop.wait())
    waits = {asyncio.create_task(worker.wait()): worker for worker in workers}
    done, _ = await asyncio.wait({stopping, *waits}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    for wait in waits:
        wait.cancel()
    if stopping in done:
        return None
    ended = next(waits[wait] for wait in done if wait in waits)
    log.error("worker_ended", pid=ended.pid, status=ended.returncode)
    return ended


async def _stop(workers: list[Process]) -> None:
    """Asks every running worker to stop and waits for them all, within one limit; any still
    running then is killed."""
    for worker in workers:
        if worker.returncode is None:
            worker.send_signal(signal.SIGTERM)
    try:
        async with asyncio.timeout(_STOP_LIMIT_S):
            await asyncio.gather(*(worker.wait() for worker in workers))
    except TimeoutError:
        for worker in workers:
            if worker.returncode is None:
                log.error("worker_killed", pid=worker.pid, after_s=_STOP_LIMIT_S)
                worker.kill()
        await asyncio.gather(*(worker.wait() for worker in workers))
    log.info("workers_stopped", statuses=[w.returncode for w in workers])


async def watch_parent(parent: int, stop: asyncio.Event) -> None:
    """A worker's side: sets ``stop`` once its supervisor ``parent`` is gone (killed outright,
    say, by a process manager that signals only the main process). Left running, the worker
    kept the port open and the server's restart found it in use."""
    # No event tells a process its parent died; asking for the parent's id is portable.
    while os.getppid() == parent:  # noqa: ASYNC110 - see above
        await asyncio.sleep(_PARENT_CHECK_S)
    log.warning("supervisor_gone", parent=parent)
    stop.set()


@contextlib.contextmanager
def _metrics_directory() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="countersign-metrics-") as made:
        yield made
