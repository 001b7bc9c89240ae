"""/metrics: Prometheus text for operators only, with presses, turns, lanes and cards."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from bot.runtime.metrics import METRICS, METRICS_DB, METRICS_TOKEN, Metrics, metrics_handler
from tests.support.cards import store_cards
from tools.db import Database


async def _serve(metrics: Metrics, db: Database, *, token: str = "") -> tuple[web.AppRunner, str]:
    app = web.Application()
    app[METRICS], app[METRICS_DB], app[METRICS_TOKEN] = metrics, db, token
    app.router.add_get("/metrics", metrics_handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}/metrics"


@pytest.fixture
async def served(db: Database) -> AsyncIterator[tuple[Metrics, str]]:
    metrics = Metrics()
    runner, url = await _serve(metrics, db)
    try:
        yield metrics, url
    finally:
        await runner.cleanup()


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_metrics_report_presses_turns_lanes_and_cards(
    served: tuple[Metrics, str], db: Database
) -> None:
    """A scrape shows the press and turn histograms, lane depths and the cards per status."""
    metrics, url = served
    await store_cards(db, "pending", "pending", "done")
    metrics.press_seconds.labels(verb="approve", outcome="done").observe(0.04)
    metrics.turn_seconds.labels(platform="slack").observe(3.0)
    metrics.watch_lane("press", waiting=lambda: 2, running=lambda: 1)
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        samples = _samples(await response.text())
    assert (
        samples[("countersign_press_seconds_count", (("outcome", "done"), ("verb", "approve")))]
        == 1
    )
    assert samples[("countersign_turn_seconds_sum", (("platform", "slack"),))] == 3.0
    assert samples[("countersign_lane_waiting", (("lane", "press"),))] == 2
    assert samples[("countersign_lane_running", (("lane", "press"),))] == 1
    assert samples[("countersign_cards", (("status", "pending"),))] == 2
    assert samples[("countersign_cards", (("status", "done"),))] == 1
    assert samples[("countersign_cards", (("status", "failed"),))] == 0


async def test_a_request_a_local_proxy_forwarded_is_refused(served: tuple[Metrics, str]) -> None:
    """Behind a reverse proxy every request is from loopback; a forwarded one gets 403."""
    _, url = served
    headers = {"X-Forwarded-For": "203.0.113.9"}
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as forwarded:
        assert forwarded.status == 403
        assert "COUNTERSIGN_METRICS_TOKEN" in (await forwarded.json())["error"]


@pytest.mark.parametrize(
    "header",
    [
        "Forwarded",
        "X-Forwarded-Host",
        "X-Real-IP",
        "CF-Connecting-IP",
        "True-Client-IP",
        "X-Client-IP",
        "Fastly-Client-IP",
        "X-Cluster-Client-IP",
        "Via",
        "X-Original-Forwarded-For",
    ],
)
async def test_a_request_forwarded_under_any_proxys_header_is_refused(
    served: tuple[Metrics, str], header: str
) -> None:
    """A proxy that names the client in its own header (Cloudflare's CF-Connecting-IP, Akamai's
    True-Client-IP, Via...) forwarded the request all the same: 403, like X-Forwarded-For."""
    _, url = served
    async with aiohttp.ClientSession() as http, http.get(url, headers={header: "1.2.3.4"}) as got:
        assert got.status == 403


async def test_with_a_token_only_its_bearer_is_answered(db: Database) -> None:
    """With COUNTERSIGN_METRICS_TOKEN set, a request without it is refused, with it answered."""
    runner, url = await _serve(Metrics(), db, token="s3cret-token-value")
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(url) as bare:
                assert bare.status == 403
            headers = {"Authorization": "Bearer s3cret-token-value"}
            async with http.get(url, headers=headers) as allowed:
                assert allowed.status == 200
    finally:
        await runner.cleanup()
