"""What operators can watch: Prometheus metrics of presses, turns, lanes and cards; never decides.

``GET /metrics`` answers in the Prometheus text format. It is for operators only: without a
``COUNTERSIGN_METRICS_TOKEN`` it answers requests from this machine alone, and not when a proxy
on this machine forwarded them (a ``Forwarded``/``X-Forwarded-For`` header), since behind a
reverse proxy every public request arrives from loopback. With the token set, it answers
requests bearing that token, from anywhere.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Gauge, Histogram
from prometheus_client.exposition import generate_latest
from sqlalchemy import func, select

from tools import CardStatus
from tools.db import Database, ProposalRow

__all__ = ["METRICS", "METRICS_DB", "METRICS_TOKEN", "Metrics", "metrics_handler"]

# Presses should take well under a second; model turns take seconds to a minute.
_PRESS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
_TURN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120)
_FORWARDED = ("Forwarded", "X-Forwarded-For", "X-Real-IP")


class Metrics:
    """The process's metrics, in a registry of their own (so tests can build one each)."""

    def __init__(self) -> None:
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
            "countersign_lane_waiting", "Work waiting for a slot", ["lane"], registry=self.registry
        )
        self._lane_running = Gauge(
            "countersign_lane_running", "Work holding a slot", ["lane"], registry=self.registry
        )
        self._cards = Gauge(
            "countersign_cards",
            "Cards by status, across every merchant, read at scrape time",
            ["status"],
            registry=self.registry,
        )

    def watch_lane(
        self, lane: str, *, waiting: Callable[[], int], running: Callable[[], int]
    ) -> None:
        """Reports a lane's queue depth and work in flight whenever metrics are scraped."""
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

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


METRICS = web.AppKey("countersign_metrics", Metrics)
METRICS_DB = web.AppKey("countersign_metrics_db", Database)
METRICS_TOKEN = web.AppKey("countersign_metrics_token", str)


def _allowed(request: web.Request, token: str) -> bool:
    if token:
        offered = request.headers.get("Authorization", "")
        return hmac.compare_digest(offered.encode(), f"Bearer {token}".encode())
    if any(name in request.headers for name in _FORWARDED):
        return False
    try:
        return ipaddress.ip_address(request.remote or "").is_loopback
    except ValueError:
        return False


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
    response = web.Response(body=metrics.exposition())
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return response


def worker_exited(pid: int) -> None:
    """Drops a stopped worker's live gauges from the sums (no-op with one process)."""
