"""What operators can watch: Prometheus metrics of presses, turns, lanes and cards; never decides.

``GET /metrics`` answers in the Prometheus text format. It is for operators only: without a
``COUNTERSIGN_METRICS_TOKEN`` it answers requests from this machine alone, and not when a proxy
on this machine forwarded them (any header a proxy adds to say so: ``Forwarded``,
``X-Forwarded-*``, ``X-Real-IP``, ``CF-Connecting-IP``, ``Via``...), since behind a reverse
proxy every public request arrives from loopback. With the token set, it answers
requests bearing that token, from anywhere.

With several worker processes (``countersign serve --workers N``) a scrape reaches whichever
worker accepted it and still reports the whole server. Each worker then runs with
``PROMETHEUS_MULTIPROC_DIR`` set (before ``prometheus_client`` is first imported: the library
picks its storage at import) and writes its values to files there; the scraping worker merges
every worker's files. Press and turn histograms are summed over all workers, those that exited
included (counters never go back). Lane gauges are summed over live workers: each worker writes
its lanes every second (``LANE_EVERY``), so another worker's lanes may be up to a second old,
and the supervisor drops an exited worker's with ``worker_exited``. Cards by status are read
from the database by the scraping worker, and the most recent reading is shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import os
from collections.abc import AsyncIterator, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, Histogram, values
from prometheus_client.exposition import generate_latest
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from sqlalchemy import func, select

from tools import CardStatus
from tools.db import Database, ProposalRow

__all__ = [
    "LANE_EVERY",
    "METRICS",
    "METRICS_DB",
    "METRICS_TOKEN",
    "Metrics",
    "metrics_handler",
    "publishing_lanes",
    "worker_exited",
]

# Presses should take well under a second; model turns take seconds to a minute.
_PRESS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
_TURN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120)
# Headers a proxy (or CDN, or load balancer) adds when it forwards a request, in lower case.
# Each names the client its own way: a list of the usual three let a proxy that sends only
# ``CF-Connecting-IP`` or ``True-Client-IP`` reach /metrics from anywhere. So a request is
# refused by the header's shape too (``_forwarded``): any name with "forwarded" in it, or
# ending in "-ip"/"-ipv6"; and these by name. A local Prometheus sends none of them.
_FORWARDED = frozenset(
    {
        "forwarded",
        "via",
        "x-real-ip",
        "cf-connecting-ip",
        "cf-connecting-ipv6",
        "true-client-ip",
        "x-client-ip",
        "fastly-client-ip",
        "x-cluster-client-ip",
        "client-ip",
        "x-envoy-external-address",
        "x-original-host",
        "x-original-url",
    }
)
# prometheus_client's own variable, read by the library itself; it is no Countersign setting.
_SHARED_DIR = "PROMETHEUS_MULTIPROC_DIR"
LANE_EVERY = 1.0
"""Seconds between a worker's writes of its lane gauges when several workers serve."""


class Metrics:
    """The process's metrics, in a registry of their own (so tests can build one each).

    With several workers the values also go to the shared files, and a scrape reads those: one
    ``Metrics`` per worker process, since two in one process would overwrite each other's.

    Attributes:
        multiprocess: True when ``prometheus_client`` keeps values in files shared by workers.
    """

    def __init__(self) -> None:
        self.multiprocess = values.ValueClass is not values.MutexValue
        self._lanes: list[tuple[str, Callable[[], int], Callable[[], int]]] = []
        self.registry = CollectorRegistry(auto_describe=True)
        self.press_seconds = Histogram(
            "countersign_press_seconds",
            "From a button press arriving to the card decided and shown",
            ["verb", "outcome"],
            buckets=_PRESS_BUCKETS,
            registry=self.registry,
        )
        self.turn_seconds = Histogram(
            "countersign_turn_seconds",
            "From a message arriving to its answer posted",
            ["platform"],
            buckets=_TURN_BUCKETS,
            registry=self.registry,
        )
        self._lane_waiting = Gauge(
            "countersign_lane_waiting",
            "Work waiting for a slot",
            ["lane"],
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self._lane_running = Gauge(
            "countersign_lane_running",
            "Work holding a slot",
            ["lane"],
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self._cards = Gauge(
            "countersign_cards",
            "Cards by status, across every merchant, read at scrape time",
            ["status"],
            registry=self.registry,
            # The scraping worker has just counted them: the newest reading is the answer.
            multiprocess_mode="livemostrecent",
        )

    def watch_lane(
        self, lane: str, *, waiting: Callable[[], int], running: Callable[[], int]
    ) -> None:
        """Reports a lane's queue depth and work in flight whenever metrics are scraped."""
        if self.multiprocess:
            # set_function only answers this process's registry, which a scrape merging the
            # workers' files never reads: the values are written to the files instead.
            self._lanes.append((lane, waiting, running))
            self.publish_lanes()
            return
        self._lane_waiting.labels(lane=lane).set_function(waiting)
        self._lane_running.labels(lane=lane).set_function(running)

    async def refresh_cards(self, db: Database) -> None:
        """Counts cards by status in one grouped query; statuses with none read 0."""
        stmt = select(ProposalRow.status, func.count()).group_by(ProposalRow.status)
        async with db.session() as session:
            rows = (await session.execute(stmt)).all()
        counts = {str(row[0]): int(row[1]) for row in rows}
        for status in CardStatus:
            self._cards.labels(status=str(status)).set(counts.get(str(status), 0))

    def publish_lanes(self) -> None:
        """Writes the watched lanes' current values where every worker's scrape reads them."""
        for lane, waiting, running in self._lanes:
            self._lane_waiting.labels(lane=lane).set(waiting())
            self._lane_running.labels(lane=lane).set(running())

    async def keep_publishing_lanes(self, *, every: float = LANE_EVERY) -> None:
        """Publishes the lanes every ``every`` seconds until cancelled."""
        while True:
            self.publish_lanes()
            await asyncio.sleep(every)

    def exposition(self) -> bytes:
        """The Prometheus text: this process's registry, or every worker's files merged."""
        if not self.multiprocess:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        MultiProcessCollector(merged)  # type: ignore[no-untyped-call]  # untyped upstream
        return generate_latest(merged)


METRICS = web.AppKey("countersign_metrics", Metrics)
METRICS_DB = web.AppKey("countersign_metrics_db", Database)
METRICS_TOKEN = web.AppKey("countersign_metrics_token", str)


def _allowed(request: web.Request, token: str) -> bool:
    if token:
        offered = request.headers.get("Authorization", "")
        return hmac.compare_digest(offered.encode(), f"Bearer {token}".encode())
    if any(_forwarded(name) for name in request.headers):
        return False
    try:
        return ipaddress.ip_address(request.remote or "").is_loopback
    except ValueError:
        return False


def _forwarded(header: str) -> bool:
    """Whether a header says a proxy forwarded the request (``_FORWARDED``)."""
    name = header.lower()
    return name in _FORWARDED or "forwarded" in name or name.endswith(("-ip", "-ipv6"))


async def metrics_handler(request: web.Request) -> web.Response:
    """``GET /metrics``: 403 for anyone but an operator, else the Prometheus text."""
    if not _allowed(request, request.app.get(METRICS_TOKEN, "")):
        return web.json_response(
            {
                "error": "metrics are for operators: ask from this machine, or set and send "
                "COUNTERSIGN_METRICS_TOKEN"
            },
            status=403,
        )
    metrics = request.app[METRICS]
    await metrics.refresh_cards(request.app[METRICS_DB])
    metrics.publish_lanes()  # this worker's own lanes as they are now, not a second ago
    response = web.Response(body=metrics.exposition())
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


async def publishing_lanes(app: web.Application) -> AsyncIterator[None]:
    """While the app runs beside other workers, keeps its lanes' gauges current (a cleanup context).

    Raises:
        RuntimeError: ``PROMETHEUS_MULTIPROC_DIR`` was set only after ``prometheus_client`` was
            imported, so this worker's numbers would be shown as if they were the whole server's.
    """
    metrics = app[METRICS]
    if os.environ.get(_SHARED_DIR) and not metrics.multiprocess:
        raise RuntimeError(
            f"{_SHARED_DIR} was set after prometheus_client was imported: set it before the "
            "worker imports bot.runtime.metrics, or start each worker as a fresh interpreter"
        )
    if not metrics.multiprocess:
        yield
        return
    task = asyncio.create_task(metrics.keep_publishing_lanes(), name="lane gauges")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def worker_exited(pid: int, *, directory: str | None = None) -> None:
    """Drops the lane and card gauges of the worker ``pid`` that exited; its histograms stay.

    Args:
        pid: The exited worker's process id.
        directory: The workers' shared directory; by default ``PROMETHEUS_MULTIPROC_DIR`` of this
            process. Without either, one process serves and there is nothing to drop.
    """
    directory = directory or os.environ.get(_SHARED_DIR)
    if directory:
        mark_process_dead(pid, directory)  # type: ignore[no-untyped-call]  # untyped upstream
