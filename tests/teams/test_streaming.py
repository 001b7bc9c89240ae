"""Streamed answers in a 1:1 chat over the fake connector: order, the card after, channels, failures."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bot.adapter import Steps, Stream
from bot.agent.offline import respond
from bot.agent.replies import MODEL_FAILED
from bot.sandbox import WebApi as FakeSlack
from tests.support.fake_connector import Call, FakeConnector, Json
from tests.teams.adaptive import validate
from tests.teams.conftest import ARJUN, TeamsBot, card_data, running_bot
from tools import Caller, Proposal
from tools.db import Database

CHAT = f"a:1{ARJUN.aad}-personal"  # Arjun's 1:1 chat with the bot


async def _ask(bot: TeamsBot, text: str) -> list[Call]:
    """Arjun writes ``text`` in his 1:1 chat; returns what the bot sent there, in order."""
    # Never shown typing: a turn slower than the threshold (a loaded machine) began its stream
    # with "Thinking…" instead of its step (tests/teams/test_stream.py pins that).
    bot.services.typing_after = 60.0
    bot.connector.chats[ARJUN.aad] = CHAT
    assert await bot.say(ARJUN, text, conversation=CHAT, personal=True) == 202
    return bot.connector.in_conversation(CHAT)


def _info(call: Call) -> Json:
    assert call.stream is not None, call.body
    return call.stream


async def _channel_answer(bot: TeamsBot, text: str) -> str:
    """The answer to ``text`` as a channel gets it: one message, never streamed."""
    before = len(bot.connector.messages())
    assert await bot.say(ARJUN, text) == 202
    answers = bot.connector.messages()[before:]
    assert len(answers) == 1, [c.body for c in answers]
    return str(answers[0].body["text"])


async def test_a_personal_answer_streams_in_order_and_ends_in_one_final_message(
    streaming: TeamsBot,
) -> None:
    """In a 1:1 chat the step is shown, then the words grow update by update (sequence rising,
    each naming the stream), and one final message carries the whole answer."""
    sent = await _ask(streaming, "branches")
    *updates, final = sent
    assert all(c.body["type"] == "typing" for c in updates), [c.body for c in sent]
    assert [_info(c)["streamType"] for c in updates[:1]] == ["informative"]
    assert updates[0].body["text"] == "Reading branches…"
    streamed = [c for c in updates if _info(c)["streamType"] == "streaming"]
    assert len(streamed) >= 2
    sequences = [_info(c)["streamSequence"] for c in updates]
    assert sequences == sorted(set(sequences)) and sequences[0] == 1
    stream_id = updates[0].created
    assert all(_info(c)["streamId"] == stream_id for c in [*updates[1:], final])
    words = [str(c.body["text"]) for c in streamed]
    assert all(later.startswith(sooner) for sooner, later in pairwise(words))
    assert final.body["type"] == "message" and _info(final)["streamType"] == "final"
    assert str(final.body["text"]).startswith(words[-1]) and "Whitefield" in final.body["text"]
    assert [c for c in sent if c.body["type"] == "message"] == [final]
    assert streaming.connector.refused() == []


async def test_updates_are_throttled_not_sent_per_word(streaming: TeamsBot) -> None:
    """Words written faster than the stream's interval are sent together: fewer updates than
    words, never two within the interval."""
    sent = await _ask(streaming, "branches")
    final = sent[-1]
    words = len(str(final.body["text"]).split())
    assert len(sent) < words
    gaps = [later.at - sooner.at for sooner, later in pairwise(sent)]
    assert min(gaps) >= 0.045, gaps


async def test_the_card_comes_whole_after_the_final_message(streaming: TeamsBot) -> None:
    """A card is never streamed: the words end in their final message, then the card is
    posted whole, and no streamed update carries its signed token."""
    sent = await _ask(streaming, "approve request 3")
    final = next(i for i, c in enumerate(sent) if c.stream and c.stream["streamType"] == "final")
    assert [c.body["type"] for c in sent[final + 1 :]] == ["message"]
    card_post = sent[-1]
    assert card_post.stream is None and len(card_post.cards) == 1
    validate(card_post.cards[0])
    token = str(card_data(card_post.cards[0])["token"])
    assert all(token not in json.dumps(c.body) for c in sent[: final + 1])
    assert not any(c.cards for c in sent[: final + 1])


async def test_a_channel_answer_is_posted_whole_with_no_stream(streaming: TeamsBot) -> None:
    """Teams streams only in 1:1 chats: in a channel the answer is one plain message, and the
    bot never tries a stream there (the connector would refuse it)."""
    text = await _channel_answer(streaming, "branches")
    assert "Whitefield" in text
    assert all(c.stream is None for c in streaming.connector.calls if c.method == "POST")
    assert streaming.connector.refused() == []


def _refuse_from(connector: FakeConnector, kind: str, nth: int, status: int, error: str) -> None:
    """The connector refuses the ``nth`` streamed update of ``kind`` and, for a 403, everything
    of the stream after it (Teams closed it)."""
    seen = {"count": 0, "closed": False}

    def refuse(body: Json) -> tuple[int, str] | None:
        info = next((e for e in body.get("entities") or [] if e.get("type") == "streaminfo"), {})
        if not info:
            return None
        if seen["closed"]:
            return status, error
        if info.get("streamType") == kind:
            seen["count"] += 1
            if seen["count"] == nth:
                seen["closed"] = status == 403
                return status, error
        return None

    connector.refuse = refuse


async def test_a_failed_update_midway_still_ends_in_the_whole_answer_once(
    streaming: TeamsBot,
) -> None:
    """Teams failing the second streamed update (a 502) stops the updates, not the answer:
    the final message still carries all of it, and it is said once."""
    whole = await _channel_answer(streaming, "branches")
    _refuse_from(streaming.connector, "streaming", 2, 502, "BadGateway")
    sent = await _ask(streaming, "branches")
    refused = streaming.connector.refused()
    assert len(refused) == 1
    after = [c for c in sent if c.at > refused[0].at]
    assert [(c.body["type"], _info(c)["streamType"]) for c in after] == [("message", "final")]
    assert after[0].body["text"] == whole
    assert [c.body["text"] for c in sent if c.body["type"] == "message"] == [whole]


async def test_a_stream_teams_closed_midway_gets_the_rest_posted_once(
    streaming: TeamsBot,
) -> None:
    """Teams refusing the stream from its second update on (403, the person stopped it) leaves
    the words it took on screen; the rest of the answer follows as one message, nothing twice."""
    whole = await _channel_answer(streaming, "branches")
    _refuse_from(streaming.connector, "streaming", 2, 403, "ContentStreamNotAllowed")
    sent = await _ask(streaming, "branches")
    shown = str([c for c in sent if c.stream][-1].body["text"])
    rest = [str(c.body["text"]) for c in sent if c.stream is None]
    assert shown and whole.startswith(shown) and len(rest) == 1
    assert rest[0] == whole[len(shown) :].strip()


async def test_the_offline_model_shows_its_step_then_the_whole_answer(signed: TeamsBot) -> None:
    """A model that answers whole still shows the step it is on in a 1:1 chat; its answer is
    the message that ends that stream, sent once."""
    sent = await _ask(signed, "branches")
    assert [(c.body["type"], _info(c)["streamType"]) for c in sent] == [
        ("typing", "informative"),
        ("message", "final"),
    ]
    assert sent[0].body["text"] == "Reading branches…"
    assert _info(sent[1])["streamId"] == sent[0].created and "Whitefield" in sent[1].body["text"]


async def _breaks_off(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    """A model that writes a few words, then loses its provider."""
    del messages, info
    for word in ("Fiesta ", "Foods ", "has "):
        await asyncio.sleep(0.02)
        yield word
    raise ModelHTTPError(502, "breaks-off", "the provider dropped the connection")


@pytest.fixture
async def breaking(
    db: Database, database_url: str, slack: FakeSlack, connector: FakeConnector
) -> AsyncIterator[TeamsBot]:
    """A Teams bot whose model breaks off midway through its answer."""
    model = FunctionModel(respond, stream_function=_breaks_off, model_name="breaks-off")
    async for bot in running_bot(
        db, database_url, slack, connector, signed=True, model=model, stream_interval=0.01
    ):
        yield bot


async def test_a_model_breaking_off_midway_ends_its_stream_then_apologises(
    breaking: TeamsBot,
) -> None:
    """The words a model wrote before it failed end their stream as they are; the apology
    follows as one message of its own, and nothing is said twice."""
    sent = await _ask(breaking, "branches")
    messages = [c for c in sent if c.body["type"] == "message"]
    assert [c.stream and c.stream["streamType"] for c in messages] == ["final", None]
    assert str(messages[0].body["text"]).strip() == "Fiesta Foods has"
    assert messages[1].body["text"] == MODEL_FAILED


@dataclass
class _Wordless:
    """What a model may answer: this turn's cards, and no words at all."""

    proposals: list[Proposal]
    text: str = ""


class Speechless:
    """The fixture's assistant, its answers' words dropped (its cards kept)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> _Wordless:
        reply = await self.inner.reply(
            conversation=conversation, caller=caller, text=text, steps=steps, stream=stream
        )
        return _Wordless(list(reply.proposals))

    async def record(self, *, conversation: str, text: str) -> None:
        await self.inner.record(conversation=conversation, text=text)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_card_with_no_words_before_it_still_comes_after_the_stream_ends(
    signed: TeamsBot,
) -> None:
    """A stream showing only "Preparing a card…" is ended before the card is posted (never
    left open above it, nor the card put in it)."""
    signed.services.assistant = Speechless(signed.services.assistant)
    sent = await _ask(signed, "approve request 3")
    kinds = [(c.body["type"], c.stream and c.stream["streamType"], len(c.cards)) for c in sent]
    assert kinds == [("typing", "informative", 0), ("message", "final", 0), ("message", None, 1)]
    assert sent[0].body["text"] == "Preparing a card…"
