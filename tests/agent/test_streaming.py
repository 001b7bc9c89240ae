"""A streaming model's words reach the stream as written, in order; tool calls and cards never do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from bot.agent import Assistant
from bot.agent.replies import TIMEOUT
from bot.settings import Settings
from bot.turns.streamed import closed, unshown
from tests.agent.conftest import ARJUN
from tests.support.streaming import RecordedStream, streaming_model
from tools import Registry
from tools.db import Database


async def test_a_streamed_answer_arrives_in_pieces_in_order(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """Each text delta is appended as written; together they are the reply's whole text."""
    assistant = Assistant(registry, db, settings, model=streaming_model())
    stream = RecordedStream()
    reply = await assistant.reply(conversation="s", caller=ARJUN, text="branches", stream=stream)
    assert len(stream.pieces) > 3
    assert "".join(stream.pieces) == reply.text
    assert "Whitefield" in reply.text


async def test_a_card_and_its_tool_call_never_enter_the_stream(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """A proposal's token and the tool call behind it are not streamed; its words are."""
    assistant = Assistant(registry, db, settings, model=streaming_model())
    stream = RecordedStream()
    reply = await assistant.reply(
        conversation="s", caller=ARJUN, text="approve request 3", stream=stream
    )
    [proposal] = reply.proposals
    streamed = "".join(stream.pieces)
    assert "Not done yet" in streamed
    assert proposal.card not in streamed and proposal.card.split(".")[0] not in streamed
    assert "approve_request" not in streamed and "request_id" not in streamed


async def test_the_offline_model_does_not_stream(assistant: Assistant) -> None:
    """The offline model answers whole: nothing is appended, the reply is as without a stream."""
    stream = RecordedStream()
    reply = await assistant.reply(conversation="o", caller=ARJUN, text="branches", stream=stream)
    assert stream.pieces == []
    assert "Whitefield" in reply.text


async def test_words_before_a_tool_call_are_their_own_paragraph(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """A model that speaks, calls a tool, then answers streams both, a paragraph apart."""

    async def chatty(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            yield "There are "
            yield "three branches."
            return
        yield "Let me look."
        yield {1: DeltaToolCall("list_branches", "{}", tool_call_id="c1")}

    model = FunctionModel(stream_function=chatty)
    assistant = Assistant(registry, db, settings, model=model)
    stream = RecordedStream()
    reply = await assistant.reply(conversation="p", caller=ARJUN, text="branches", stream=stream)
    assert reply.text == "Let me look.\n\nThere are three branches."
    assert "".join(stream.pieces) == reply.text


async def test_a_run_that_times_out_midway_keeps_what_was_shown(
    registry: Registry, db: Database, settings: Settings
) -> None:
    """Words already streamed stay the reply's start; the apology follows them.

    The limit leaves room for a loaded machine to reach the first words; the stall outlasts it.
    """

    async def stalls(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        yield "Looking at your "
        await asyncio.sleep(60)
        yield "never"

    assistant = Assistant(
        registry, db, settings, model=FunctionModel(stream_function=stalls), timeout=2.0
    )
    stream = RecordedStream()
    reply = await assistant.reply(conversation="t", caller=ARJUN, text="branches", stream=stream)
    assert "".join(stream.pieces) == "Looking at your "
    assert reply.text == f"Looking at your\n\n{TIMEOUT}"
    assert unshown(reply.text, "".join(stream.pieces)) == TIMEOUT


def test_what_a_failed_stream_did_not_show_is_posted() -> None:
    """The rest after the shown start; all of it when nothing was shown or it is no start."""
    assert unshown("Hello there. Bye.", "Hello th") == "ere. Bye."
    assert unshown("Hello there.", "") == "Hello there."
    assert unshown("Hello there.", "Hello there.\n") == ""
    assert unshown("Hello there.", "Goodbye") == "Hello there."


async def test_a_stream_that_raises_on_close_counts_as_showing_nothing() -> None:
    """A surface's broken stream costs no answer: the whole of it is posted instead."""

    class Broken(RecordedStream):
        async def close(self) -> str:
            raise RuntimeError("broken")

    assert await closed(Broken(pieces=["Hello"])) == ""
