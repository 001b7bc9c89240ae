"""Streamed answers over the real endpoint: in order, the card whole after them, no text lost."""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from bot.agent import Assistant
from bot.sandbox import Call, Message, WebApi
from bot.settings import Settings
from bot.slack import streaming
from tests.slack.conftest import (
    CARD_SECRET,
    CHANNEL,
    DM,
    Bot,
    SlackWebApi,
    buttons,
    said,
    serving,
    validate,
)
from tests.support.slack_requests import TEAM, message
from tests.support.streaming import streaming_model

# A safety net so a call sleeping out Retry-After fails the test instead of hanging it.
_NEVER = 20.0
_STREAMS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


class LimitingWebApi(SlackWebApi):
    """The fake Web API, answering its next ``limited`` appendStream calls with HTTP 429."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limited = 0

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["method"] == "chat.appendStream" and self.limited > 0:
            self.limited -= 1
            self.calls.append(Call("chat.appendStream (429)", {}))
            headers = {"Retry-After": "30"}
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429, headers=headers
            )
        return await super()._api(request)


@pytest.fixture
async def slack() -> AsyncIterator[WebApi]:
    async with serving(LimitingWebApi(team_id=TEAM)) as fake:
        yield fake


@pytest.fixture
def streamed(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> Bot:
    """The bot with a model that streams, its stream flushing at every chance (many calls)."""
    settings = Settings(countersign_model="offline", countersign_secret=CARD_SECRET)
    bot.assistant.inner = Assistant(
        bot.registry, bot.services.db, settings, model=streaming_model()
    )
    monkeypatch.setattr(streaming, "EVERY", 0.0)
    return bot


def stream_calls(bot: Bot) -> list[tuple[str, dict[str, Any]]]:
    return [(c.method, c.params) for c in bot.slack.calls if c.method in _STREAMS]


def streamed_text(bot: Bot) -> str:
    return "".join(str(params.get("markdown_text") or "") for _, params in stream_calls(bot))


def answers(bot: Bot, channel: str, thread: str) -> list[Message]:
    return [
        m
        for m in bot.slack.thread(channel, thread)
        if m.user == bot.slack.bot_user_id and not buttons(m.blocks)
    ]


async def ask_in_thread(bot: Bot, text: str) -> str:
    thread = bot.ts()
    await bot.send(
        message("UARJUN", text, channel=DM, ts=bot.ts(), thread_ts=thread, channel_type="im")
    )
    return thread


async def test_a_streamed_answer_arrives_in_order_and_the_card_after_it_whole(
    streamed: Bot,
) -> None:
    """Start, appends, stop, then the card's post; the card's token is in no stream call."""
    thread = await ask_in_thread(streamed, "approve request 3")
    calls = stream_calls(streamed)
    methods = [method for method, _ in calls]
    assert methods[0] == "chat.startStream" and methods[-1] == "chat.stopStream"
    assert methods.count("chat.appendStream") >= 2, "the answer went out in pieces"
    assert calls[0][1]["thread_ts"] == thread and calls[0][1]["recipient_user_id"] == "UARJUN"
    [answer] = answers(streamed, DM, thread)
    assert answer.text == streamed_text(streamed)
    assert "Not done yet" in answer.text and not answer.streaming
    [card] = streamed.cards(DM)
    order = [c.method for c in streamed.slack.calls]
    assert order.index("chat.postMessage") > order.index("chat.stopStream")
    token = next(e["value"] for b in card.blocks if b["type"] == "actions" for e in b["elements"])
    assert all(token not in str(params) for _, params in calls)
    assert all(b["type"] != "context_actions" for b in card.blocks), "no thumbs on a card"
    feedback = calls[-1][1]["blocks"]
    assert [b["type"] for b in feedback] == ["context_actions"]
    validate(feedback)


async def test_a_streamed_answer_says_done_once_its_card_is_approved(streamed: Bot) -> None:
    """The streamed "Not done yet: it is waiting for your approval…" above Arjun's card is
    edited, once he approves it, to read "Done: see the card below."."""
    thread = await ask_in_thread(streamed, "approve request 3")
    [answer] = answers(streamed, DM, thread)
    assert answer.text.startswith("Not done yet")
    await streamed.press("UARJUN", streamed.cards(DM)[0])
    assert streamed.slack.message(DM, answer.ts).text == "Done: see the card below."


async def test_a_quick_answer_is_a_few_calls_not_one_per_piece(bot: Bot) -> None:
    """Batched once a second: the many pieces of a quick answer go out in two or three calls."""
    settings = Settings(countersign_model="offline", countersign_secret=CARD_SECRET)
    bot.assistant.inner = Assistant(
        bot.registry, bot.services.db, settings, model=streaming_model()
    )
    thread = await ask_in_thread(bot, "branches")
    [answer] = answers(bot, DM, thread)
    assert len(answer.text) > 10 * 7, "many pieces of seven characters"
    methods = [method for method, _ in stream_calls(bot)]
    # Start and stop; one append more only if the start alone took over a second.
    assert methods[0] == "chat.startStream" and methods[-1] == "chat.stopStream"
    assert len(methods) <= 3


async def test_a_mention_streams_into_its_thread_for_the_person_who_asked(streamed: Bot) -> None:
    """A channel mention's answer streams into the mention's thread, to its sender's team."""
    thread = await streamed.mention("UARJUN", "branches")
    [(_, start), *_] = stream_calls(streamed)
    assert (start["channel"], start["thread_ts"]) == (CHANNEL, thread)
    assert (start["recipient_user_id"], start["recipient_team_id"]) == (
        "UARJUN",
        streamed.slack.team_id,
    )
    [answer] = answers(streamed, CHANNEL, thread)
    assert "Whitefield" in answer.text
    assert [m.method for m in streamed.slack.calls].count("chat.postMessage") == 0


async def test_a_stream_failing_midway_still_delivers_the_answer_once(streamed: Bot) -> None:
    """appendStream refused after the first piece: the rest is posted once, after what showed."""
    append = streamed.slack._chat_appendStream
    seen = 0

    async def failing(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal seen
        seen += 1
        return await append(params) if seen < 2 else {"ok": False, "error": "internal_error"}

    streamed.slack._chat_appendStream = failing  # type: ignore[method-assign]
    thread = await ask_in_thread(streamed, "branches")
    shown, rest = answers(streamed, DM, thread)
    assert shown.text and rest.text
    whole = await _whole_answer(streamed, "branches")
    assert _bare(html.unescape(shown.text) + _said(rest)) == _bare(whole)
    assert not any(b["type"] == "context_actions" for b in shown.blocks)
    assert [b["type"] for b in rest.blocks][-1] == "context_actions"


async def test_a_rate_limited_append_loses_no_text(streamed: Bot) -> None:
    """An appendStream answered ratelimited keeps its words; they go with a later call."""
    append = streamed.slack._chat_appendStream
    seen = 0

    async def limited(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal seen
        seen += 1
        return {"ok": False, "error": "ratelimited"} if seen == 1 else await append(params)

    streamed.slack._chat_appendStream = limited  # type: ignore[method-assign]
    thread = await ask_in_thread(streamed, "branches")
    [answer] = answers(streamed, DM, thread)
    assert _bare(html.unescape(answer.text)) == _bare(await _whole_answer(streamed, "branches"))


async def test_an_http_429_is_not_slept_out_in_the_call_and_loses_no_text(
    streamed: Bot,
) -> None:
    """appendStream answered 429 (Retry-After 30): no retry sleeps 30 s, the words go at stop."""
    assert isinstance(streamed.slack, LimitingWebApi)
    streamed.slack.limited = 1
    async with asyncio.timeout(_NEVER):
        thread = await ask_in_thread(streamed, "branches")
    limited = [c.method for c in streamed.slack.calls].count("chat.appendStream (429)")
    assert limited == 1, "the client did not retry it (that would sleep out Retry-After)"
    [answer] = answers(streamed, DM, thread)
    assert _bare(html.unescape(answer.text)) == _bare(await _whole_answer(streamed, "branches"))


async def test_the_offline_model_posts_its_answer_whole_with_feedback(bot: Bot) -> None:
    """No stream call at all; one post, its words as today and the thumbs under them."""
    thread = await ask_in_thread(bot, "branches")
    assert stream_calls(bot) == []
    [answer] = answers(bot, DM, thread)
    assert "Whitefield" in answer.text
    assert [b["type"] for b in answer.blocks] == ["rich_text", "context_actions"]
    validate(answer.blocks)


async def _whole_answer(bot: Bot, text: str) -> str:
    """What the offline model answers to ``text``, unstreamed, in a conversation of its own."""
    settings = Settings(countersign_model="offline", countersign_secret=CARD_SECRET)
    offline = Assistant(bot.registry, bot.services.db, settings)
    _, caller = await bot.services.directory.identify("slack", bot.slack.team_id, "UARJUN")
    assert caller is not None
    return (await offline.reply(conversation="whole", caller=caller, text=text)).text


def _said(posted: Message) -> str:
    return said([b for b in posted.blocks if b["type"] == "rich_text"])


def _bare(text: str) -> str:
    """Text without its whitespace: where a stream broke off, the rest starts a new message."""
    return "".join(text.split())
