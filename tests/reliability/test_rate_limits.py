"""Slack answers 429 with Retry-After: every message is retried, none is lost, none is posted twice."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from bot.sandbox import WebApi as FakeSlack
from tests.reliability.harness import CHANNEL, PEOPLE, in_process_bot
from tools import CardStatus
from tools.db import Database

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("backend", ["sqlite"], indirect=True)]


class ThrottledSlack(FakeSlack):
    """Answers the first ``limit`` chat.postMessage calls with 429 and Retry-After: 0 (the client still waits its jitter)."""

    def __init__(self, limit: int) -> None:
        super().__init__(team_id="T0FIESTA")
        self.limit, self.refused = limit, 0

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["method"] == "chat.postMessage" and self.refused < self.limit:
            self.refused += 1
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": "0"}
            )
        return await super()._api(request)


@pytest.fixture
async def throttled() -> AsyncIterator[ThrottledSlack]:
    fake = ThrottledSlack(limit=2)
    for user, (name, email) in PEOPLE.items():
        fake.add_user(user, name, email)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()


async def test_rate_limited_posts_are_retried_once_each(
    db: Database, throttled: ThrottledSlack
) -> None:
    """Two 429s on the reply and the card: both arrive, once each; the approval's audit line too."""
    async with in_process_bot(db, throttled) as bot:
        thread = await bot.mention("UARJUN", "approve request 3")
        assert throttled.refused == 2
        posted = [m for m in throttled.messages if m.channel == CHANNEL and m.thread_ts == thread]
        [card] = bot.cards()
        assert len(posted) == 2 and card in posted  # the reply and the card, each exactly once

        throttled.limit += 1  # the audit line after the press meets one more 429
        assert await bot.press("UARJUN", card) == 200
        assert throttled.refused == 3
        [record] = await bot.card_store.rows()
        assert record.status == CardStatus.DONE
        thread_messages = [m for m in throttled.messages if m.thread_ts == thread]
        audit = [m for m in thread_messages if m.text.startswith(":white_check_mark:")]
        assert len(audit) == 1 and len(thread_messages) == 3
