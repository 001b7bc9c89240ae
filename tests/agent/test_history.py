"""Conversations: stored per key, bounded at turn boundaries, told of decisions, safe under races."""

from __future__ import annotations

import asyncio

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import update
from structlog.testing import capture_logs

from bot.agent import Assistant
from bot.agent.history import starts_turn, trim
from bot.agent.offline import respond
from bot.settings import Settings
from tests.agent.conftest import ARJUN, MEERA, SAM, Recorder
from tools import Registry
from tools.db import ConversationRow, Database


def _paired(messages: list[ModelMessage]) -> bool:
    """Every tool call in the history has its return, and no return lacks its call."""
    calls = {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    }
    returns = {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }
    return calls == returns


async def test_history_is_stored_per_conversation(assistant: Assistant) -> None:
    """A turn's prompt, tool call, result and answer are kept under its key and no other."""
    await assistant.reply(conversation="a", caller=ARJUN, text="branches")
    stored = await assistant.store.load("a")
    assert (stored.version, stored.tenant_id, len(stored.messages)) == (1, 1, 4)
    assert _paired(stored.messages)
    assert (await assistant.store.load("b")).messages == []


async def test_the_next_turn_sees_the_earlier_ones(
    assistant: Assistant, recorder: Recorder
) -> None:
    """The model's second turn is sent the first turn's prompt and answer."""
    await assistant.reply(conversation="a", caller=ARJUN, text="branches")
    await assistant.reply(conversation="a", caller=MEERA, text="pending requests")
    assert "[from Arjun Mehta, manager] branches" in recorder.text().split("Meera Iyer")[0]
    assert "MG Road" in repr(recorder.seen[-2])


async def test_history_is_bounded_at_turn_boundaries(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """With room for 6 messages, five turns leave at most 6, starting at a prompt, calls paired."""
    assistant = Assistant(registry, db, settings, max_messages=6)
    for text in ("branches", "pending requests", "help", "stock at Whitefield", "sales today"):
        await assistant.reply(conversation="a", caller=ARJUN, text=text)
    stored = await assistant.store.load("a")
    assert 0 < len(stored.messages) <= 6
    assert starts_turn(stored.messages[0])
    assert _paired(stored.messages)
    assert "sales today" in repr(stored.messages)
    assert "branches" not in repr(stored.messages[0])


def test_trim_never_splits_a_tool_call_from_its_return() -> None:
    """Cutting keeps whole turns: a limit inside a turn moves the cut to the next prompt."""
    turn: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("q")]),
        ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="x")]),
        ModelRequest(parts=[ToolReturnPart("t", "r", tool_call_id="x")]),
        ModelResponse(parts=[TextPart("a")]),
    ]
    messages = turn * 3
    assert trim(messages, 12) == messages
    assert trim(messages, 6) == turn
    assert trim(messages, 8) == turn * 2
    assert trim(messages, 2) == turn


async def test_a_recorded_decision_reaches_the_next_turn(
    assistant: Assistant, recorder: Recorder
) -> None:
    """`record` adds a note the model is sent with the next message, marked as not the person's."""
    await assistant.reply(conversation="a", caller=ARJUN, text="approve request 3")
    await assistant.record(conversation="a", text="Arjun Mehta approved: Approve request 3. Done.")
    await assistant.reply(conversation="a", caller=ARJUN, text="pending requests")
    last_sent = repr(recorder.seen[-2])
    assert "[Countersign] Arjun Mehta approved: Approve request 3. Done." in last_sent
    assert _paired((await assistant.store.load("a")).messages)


async def test_two_messages_at_once_both_stay_in_history(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """Two turns that read the same version both end up stored, one after the other."""
    both_running = asyncio.Barrier(2)

    async def slow(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            await asyncio.wait_for(both_running.wait(), timeout=60)
        return await respond(messages, info)

    assistant = Assistant(registry, db, settings, model=FunctionModel(slow))
    await asyncio.gather(
        assistant.reply(conversation="a", caller=ARJUN, text="branches"),
        assistant.reply(conversation="a", caller=MEERA, text="pending requests"),
    )
    stored = await assistant.store.load("a")
    assert stored.version == 2
    assert len(stored.messages) == 8
    assert "Arjun Mehta, manager] branches" in repr(stored.messages)
    assert "Meera Iyer, manager] pending requests" in repr(stored.messages)
    assert _paired(stored.messages)


async def test_another_merchant_cannot_continue_a_conversation(assistant: Assistant) -> None:
    """Sam (Harbor Books) in a thread holding Fiesta's history is turned away; nothing is read."""
    await assistant.reply(conversation="a", caller=ARJUN, text="pending requests")
    reply = await assistant.reply(conversation="a", caller=SAM, text="pending requests")
    assert "another merchant" in reply.text
    stored = await assistant.store.load("a")
    assert (stored.version, stored.tenant_id) == (1, 1)


async def test_an_unreadable_history_starts_afresh(assistant: Assistant, db: Database) -> None:
    """A history this release cannot read is logged and replaced, not a thread that always fails."""
    await assistant.reply(conversation="a", caller=ARJUN, text="branches")
    async with db.session() as session:
        await session.execute(
            update(ConversationRow).where(ConversationRow.key == "a").values(messages='[{"x": 1}]')
        )
        await session.commit()
    with capture_logs() as logs:
        reply = await assistant.reply(conversation="a", caller=ARJUN, text="pending requests")
    assert "#3" in reply.text
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["conversation.unreadable"]
    stored = await assistant.store.load("a")
    assert (stored.version, len(stored.messages)) == (2, 4)


async def test_unanswered_tool_calls_are_never_stored(assistant: Assistant) -> None:
    """A turn ending in a tool call with no result is cut off, so the next prompt is accepted."""
    dangling: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("[from Arjun Mehta, manager] branches")]),
        ModelResponse(parts=[ToolCallPart("list_branches", {}, tool_call_id="lost")]),
    ]
    await assistant.store.append("a", dangling, tenant_id=1, seen=await assistant.store.load("a"))
    assert [type(m) for m in (await assistant.store.load("a")).messages] == [ModelRequest]
    reply = await assistant.reply(conversation="a", caller=ARJUN, text="branches")
    assert "MG Road" in reply.text
    assert _paired((await assistant.store.load("a")).messages)


async def test_a_note_can_open_a_conversation(assistant: Assistant) -> None:
    """A decision recorded before any turn is kept, and the first turn claims the merchant."""
    await assistant.record(conversation="n", text="Meera Iyer rejected: Close Whitefield.")
    assert (await assistant.store.load("n")).tenant_id is None
    await assistant.reply(conversation="n", caller=ARJUN, text="help")
    stored = await assistant.store.load("n")
    assert (stored.tenant_id, stored.version, len(stored.messages)) == (1, 2, 3)
    assert "[Countersign] Meera Iyer rejected" in repr(stored.messages[0])
