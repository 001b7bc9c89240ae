"""Slack's assistant threads over the real endpoint: prompts and a title, a status per step, 429s."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from structlog.testing import capture_logs

from bot.sandbox import WebApi
from bot.slack import status
from tests.slack.conftest import DM, Bot, SlackWebApi, serving
from tests.support.slack_requests import TEAM, event, message

# A safety net so a held call fails the test instead of hanging it; nothing is timed.
_NEVER = 60.0


class HoldingWebApi(SlackWebApi):
    """The fake Web API, whose ``assistant.threads.setStatus`` can be held and then answered 429."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hold: asyncio.Event | None = None
        self.held = asyncio.Event()

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["method"] == "assistant.threads.setStatus" and self.hold is not None:
            self.held.set()
            await self.hold.wait()
            headers = {"Retry-After": "30"}
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429, headers=headers
            )
        return await super()._api(request)


@pytest.fixture
async def slack() -> AsyncIterator[WebApi]:
    async with serving(HoldingWebApi(team_id=TEAM)) as fake:
        yield fake


def started(user: str, thread_ts: str) -> dict[str, Any]:
    return {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": user,
            "context": {"channel_id": "C0OPS", "team_id": TEAM, "enterprise_id": None},
            "channel_id": DM,
            "thread_ts": thread_ts,
        },
        "event_ts": thread_ts,
    }


def statuses(bot: Bot) -> list[str]:
    return [str(call["status"]) for call in bot.slack.called("assistant.threads.setStatus")]


async def test_a_thread_that_starts_gets_prompts_for_the_role_and_a_title(bot: Bot) -> None:
    """A manager's new assistant thread offers the cards waiting for her; staff's does not."""
    manager, staff = bot.ts(), bot.ts()
    assert await bot.send(started("UMEERA", manager)) == 200
    assert await bot.send(started("URAVI", staff)) == 200
    meera, ravi = bot.slack.threads[(DM, manager)], bot.slack.threads[(DM, staff)]
    assert meera["title"] == "Countersign for Meera Iyer"
    assert {"title": "What's waiting for me?", "message": "What's waiting for me?"} in meera[
        "prompts"
    ]
    assert [p["title"] for p in ravi["prompts"]] == [
        "Pending requests",
        "Sales this week",
        "Branches",
    ]
    assert ravi["title"] == "Countersign for Ravi Kumar"


async def test_a_thread_context_change_is_answered_without_reading_the_thread(bot: Bot) -> None:
    """The context event gets a 200 (no Slack retries) and no conversations.replies (Tier 1)."""
    event = {**started("UARJUN", bot.ts()), "type": "assistant_thread_context_changed"}
    assert await bot.send(event) == 200
    assert bot.slack.called("conversations.replies") == []


async def test_a_turn_in_a_thread_shows_the_step_of_each_tool_it_calls(bot: Bot) -> None:
    """A read shows "is reading requests…", a write "is preparing a card…"; each is cleared after."""
    thread = bot.ts()
    await bot.send(
        message(
            "UARJUN",
            "pending requests",
            channel=DM,
            ts=bot.ts(),
            thread_ts=thread,
            channel_type="im",
        )
    )
    assert statuses(bot) == ["is reading requests…", ""]
    answers = [m for m in bot.slack.thread(DM, thread) if m.user == bot.slack.bot_user_id]
    assert len(answers) == 1 and "request" in answers[0].text.lower()
    await bot.send(
        message(
            "UARJUN",
            "approve request 1",
            channel=DM,
            ts=bot.ts(),
            thread_ts=thread,
            channel_type="im",
        )
    )
    assert statuses(bot)[2:] == ["is preparing a card…", ""]
    assert bot.cards(DM), "the card is posted in the thread, whole"
    assert bot.slack.called("reactions.add") == []


async def test_a_status_rate_limited_never_holds_up_the_answer(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With setStatus held and then answered 429, the answer is posted first; the status is dropped."""
    # Each 429 is cut short by the status timeout (the client would sleep out Retry-After);
    # a shorter one keeps the test from waiting two of them out at 2 s each.
    monkeypatch.setattr(status, "STATUS_TIMEOUT", 0.3)
    assert isinstance(bot.slack, HoldingWebApi)
    bot.slack.hold = asyncio.Event()
    thread = bot.ts()
    posted = asyncio.Event()
    post = bot.slack._chat_postMessage

    async def recorded(params: dict[str, Any]) -> dict[str, Any]:
        answer = await post(params)
        posted.set()
        return answer

    bot.slack._chat_postMessage = recorded  # type: ignore[method-assign]
    body = message(
        "UARJUN", "branches", channel=DM, ts=bot.ts(), thread_ts=thread, channel_type="im"
    )
    with capture_logs() as logs:
        response = await bot.post(json.dumps(event(body)), "application/json")
        assert response.status == 200
        await asyncio.wait_for(bot.slack.held.wait(), _NEVER)
        await asyncio.wait_for(posted.wait(), _NEVER)
        assert not bot.slack.hold.is_set(), "the answer went out while the status call was held"
        bot.slack.hold.set()
        await bot.settle()
    assert any(entry["event"] == "status_failed" for entry in logs)
    assert bot.slack.threads.get((DM, thread), {}).get("status") is None


async def test_a_thread_is_titled_by_its_first_question(bot: Bot) -> None:
    """History listed two threads alike ("Countersign for Arjun Mehta"); once Arjun asks, his
    thread is titled by his first question, and a second question leaves the title as it is."""
    first, second = bot.ts(), bot.ts()
    for thread in (first, second):
        assert await bot.send(started("UARJUN", thread)) == 200
    asked = {first: "pending requests", second: "stock   at\nKoramangala"}
    for thread, text in asked.items():
        await bot.send(
            message("UARJUN", text, channel=DM, ts=bot.ts(), thread_ts=thread, channel_type="im")
        )
    await bot.send(
        message("UARJUN", "branches", channel=DM, ts=bot.ts(), thread_ts=first, channel_type="im")
    )
    assert bot.slack.threads[(DM, first)]["title"] == "pending requests"
    assert bot.slack.threads[(DM, second)]["title"] == "stock at Koramangala"
    titles = [c["title"] for c in bot.slack.called("assistant.threads.setTitle")]
    assert titles.count("pending requests") == 1 and "branches" not in titles
