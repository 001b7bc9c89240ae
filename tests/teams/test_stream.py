"""A Teams stream on its own: what it sends for steps and words, against a recording chat."""

from __future__ import annotations

import asyncio

import pytest
from microsoft_agents.activity import Activity, ResourceResponse

from bot.teams import stream as stream_module
from bot.teams.stream import TeamsStream
from bot.teams.texts import THINKING


class Chat:
    """Records what a stream sends, answering each as Teams does (the stream's id)."""

    def __init__(self) -> None:
        self.sent: list[Activity] = []

    async def send_activity(self, activity: Activity, /) -> ResourceResponse | None:
        self.sent.append(activity)
        return ResourceResponse(id="stream-1")


async def test_thinking_never_replaces_a_step_already_shown() -> None:
    """ "Thinking…" (a slow answer's typing) is shown only first: a step shown before it says
    more, and stays until the words replace it."""
    chat = Chat()
    stream = TeamsStream(chat, interval=0.01)
    stream.inform("Reading requests…")
    await asyncio.sleep(0.02)  # the model at work: the update goes out meanwhile
    stream.inform(THINKING, first=True)
    await asyncio.sleep(0.02)
    await stream.append("Two requests wait.")
    await asyncio.sleep(0.02)
    assert await stream.close() == "Two requests wait."
    words = "Two requests wait."
    assert [a.text for a in chat.sent] == ["Reading requests…", words, words]
    assert [a.type for a in chat.sent] == ["typing", "typing", "message"]


async def test_thinking_is_shown_when_nothing_else_was() -> None:
    """A slow answer with no step yet shows "Thinking…" as its first informative update."""
    chat = Chat()
    stream = TeamsStream(chat, interval=0.01)
    stream.inform(THINKING, first=True)
    await asyncio.sleep(0.02)
    assert await stream.close() == ""
    assert await stream.end("Nothing waits for you.")
    assert [a.text for a in chat.sent] == [THINKING, "Nothing waits for you."]


class Hanging(Chat):
    """A chat whose Bot Connector never answers a send."""

    async def send_activity(self, activity: Activity, /) -> ResourceResponse | None:
        self.sent.append(activity)
        await asyncio.Event().wait()
        return None


async def test_a_send_that_never_answers_counts_as_failed_and_holds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A hung Bot Connector call held the stream's end, and with it the turn's cards and the
    conversation's later messages: past the call limit it fails, and the stream reports that
    nobody saw anything, so the whole answer is posted."""
    monkeypatch.setattr(stream_module, "CALL_TIMEOUT", 0.05)
    stream = TeamsStream(Hanging(), interval=0.01)
    await stream.append("Two requests wait.")
    async with asyncio.timeout(5):  # a safety net only: without the limit this waited for good
        assert await stream.close() == ""
