"""Deliveries are signed as Slack signs them and retried as Slack retries them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from slack_sdk.signature import SignatureVerifier

from bot.sandbox import FIESTA_OPS, Delivery
from bot.sandbox.payloads import event, message
from tests.sandbox.conftest import SECRET, Stack

# Long enough for the fast answer on a machine shared with other suites.
TIMEOUT = 1.0


class Endpoint:
    """A stand-in bot that is slow (or failing) for its first ``slow`` requests."""

    def __init__(self, *, slow: int = 0, failing: bool = False) -> None:
        self.slow, self.failing = slow, failing
        self.seen: list[tuple[dict[str, str], bytes]] = []
        # A slow request waits for this, which is set only at teardown: it times out however
        # long the timeout is, and the fast one has the whole timeout to answer (with a fixed
        # 0.5 s sleep against a 0.2 s timeout, a loaded machine slower than 0.2 s to answer
        # the fast request turned it into a third timeout).
        self.released = asyncio.Event()

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append((dict(request.headers), await request.read()))
        if self.failing:
            return web.Response(status=500)
        if len(self.seen) <= self.slow:
            await self.released.wait()
        return web.Response(text="")


@pytest.fixture
async def endpoint() -> AsyncIterator[tuple[Endpoint, TestServer]]:
    stand_in = Endpoint(slow=2)
    app = web.Application()
    app.router.add_post("/slack/events", stand_in.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield stand_in, server
    finally:
        stand_in.released.set()
        await server.close()


async def test_every_attempt_is_signed_with_the_bots_secret(
    endpoint: tuple[Endpoint, TestServer],
) -> None:
    """Each attempt carries a fresh v0 signature that slack_sdk's verifier accepts."""
    stand_in, server = endpoint
    delivery = Delivery(
        str(server.make_url("/slack/events")), SECRET, timeout=TIMEOUT, retry_delays=(0, 0, 0)
    )
    try:
        await delivery.event(event(message("UARJUN", "hi", channel=FIESTA_OPS, ts="1.000001")))
    finally:
        await delivery.close()
    verifier = SignatureVerifier(SECRET)
    assert len(stand_in.seen) == 3
    for headers, body in stand_in.seen:
        assert verifier.is_valid_request(body, headers)
    assert not SignatureVerifier("another-secret").is_valid_request(*reversed(stand_in.seen[0]))


async def test_a_timed_out_event_is_retried_with_slacks_retry_headers(
    endpoint: tuple[Endpoint, TestServer],
) -> None:
    """Two timeouts, then an ack: retries 1 and 2 say http_timeout, and the same event id is resent."""
    stand_in, server = endpoint
    delivery = Delivery(
        str(server.make_url("/slack/events")), SECRET, timeout=TIMEOUT, retry_delays=(0, 0, 0)
    )
    try:
        outcome = await delivery.event(
            event(message("UARJUN", "hi", channel=FIESTA_OPS, ts="1.000002"))
        )
    finally:
        await delivery.close()
    assert outcome.ok
    assert [(a.retry, a.reason) for a in outcome.attempts] == [
        (0, None),
        (1, "http_timeout"),
        (2, "http_timeout"),
    ]
    headers = [h for h, _ in stand_in.seen]
    assert "X-Slack-Retry-Num" not in headers[0]
    assert [h.get("X-Slack-Retry-Num") for h in headers[1:]] == ["1", "2"]
    assert len({json.loads(b)["event_id"] for _, b in stand_in.seen}) == 1


async def test_a_bot_that_never_acks_gets_three_retries_and_no_more() -> None:
    """An endpoint answering 500 sees the first attempt and exactly three retries."""
    stand_in = Endpoint(failing=True)
    app = web.Application()
    app.router.add_post("/slack/events", stand_in.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    delivery = Delivery(str(server.make_url("/slack/events")), SECRET, retry_delays=(0, 0, 0))
    try:
        outcome = await delivery.event(
            event(message("UARJUN", "hi", channel=FIESTA_OPS, ts="1.000003"))
        )
    finally:
        await delivery.close()
        await server.close()
    assert not outcome.ok
    assert [(a.retry, a.reason, a.status) for a in outcome.attempts] == [
        (0, None, 500),
        (1, "http_error", 500),
        (2, "http_error", 500),
        (3, "http_error", 500),
    ]


async def test_the_real_bot_answers_a_retried_event_once(stack: Stack) -> None:
    """The same mention delivered again with X-Slack-Retry-Num is acked and not answered twice."""
    envelope = event(
        message("UARJUN", "<@UBOT> branches", channel=FIESTA_OPS, ts="1.000004", kind="app_mention")
    )
    first = await stack.acting.delivery.event(envelope)
    await stack.settle()
    again = await stack.acting.delivery.event(envelope)
    await stack.settle()
    assert first.ok and again.ok
    answers = [c for c in stack.api.calls if c.method == "chat.postMessage"]
    assert len(answers) == 1


async def test_a_wrong_secret_is_refused_by_the_real_bot(stack: Stack) -> None:
    """The bot's endpoint checks the sandbox's signature: a delivery signed otherwise gets 401."""
    forged = Delivery(stack.acting.delivery.url, "not-the-secret", retry_delays=())
    try:
        outcome = await forged.event(
            event(
                message(
                    "UARJUN",
                    "<@UBOT> branches",
                    channel=FIESTA_OPS,
                    ts="1.000005",
                    kind="app_mention",
                )
            )
        )
    finally:
        await forged.close()
    await stack.settle()
    assert outcome.status == 401
    assert [c for c in stack.api.calls if c.method == "chat.postMessage"] == []
