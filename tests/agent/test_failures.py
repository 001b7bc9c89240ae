"""A failing, slow or looping model still gets the person a polite answer, and the next turn works."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from structlog.testing import capture_logs

from bot.agent import Assistant, replies
from bot.agent.offline import respond
from bot.settings import Settings
from tests.agent.conftest import ARJUN
from tests.agent.test_history import _paired
from tools import Registry
from tools.db import Database

Step = Callable[[list[ModelMessage], AgentInfo], Awaitable[ModelResponse]]


def _first_call_then_offline(first: Step) -> FunctionModel:
    """A model whose first request runs ``first``; every later one is the offline model."""
    calls = 0

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal calls
        calls += 1
        return await (first if calls == 1 else respond)(messages, info)

    return FunctionModel(model)


async def _unavailable(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ModelHTTPError(503, "test-model", {"error": "overloaded"})


async def _asleep(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    await asyncio.sleep(30)
    raise AssertionError("the turn should have been stopped")


async def _broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ValueError("a bug in the model adapter")


async def _second_turn_works(assistant: Assistant) -> None:
    reply = await assistant.reply(conversation="f", caller=ARJUN, text="branches")
    assert "MG Road" in reply.text
    stored = await assistant.store.load("f")
    assert _paired(stored.messages)
    assert isinstance(stored.messages[-1], ModelResponse)


async def test_a_model_error_is_answered_politely(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """An HTTP 503 from the provider becomes a polite reply; the next message is answered."""
    assistant = Assistant(registry, db, settings, model=_first_call_then_offline(_unavailable))
    reply = await assistant.reply(conversation="f", caller=ARJUN, text="branches")
    assert reply.text == replies.MODEL_FAILED
    assert reply.proposals == []
    await _second_turn_works(assistant)


async def test_a_slow_model_is_stopped(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """A model past the turn's timeout is cancelled with a polite reply; the next turn works."""
    model = _first_call_then_offline(_asleep)
    assistant = Assistant(registry, db, settings, model=model, timeout=0.3)
    reply = await assistant.reply(conversation="f", caller=ARJUN, text="branches")
    assert reply.text == replies.TIMEOUT
    assistant.timeout = 60  # the next turn does real database work, slower than 0.3 s on a busy CI
    await _second_turn_works(assistant)


async def test_a_looping_model_hits_the_usage_limit(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """A model calling tools forever stops at the request limit, the history left whole."""

    async def forever(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("list_branches", {})])

    assistant = Assistant(registry, db, settings, model=FunctionModel(forever))
    with capture_logs() as logs:
        reply = await assistant.reply(conversation="f", caller=ARJUN, text="branches")
    assert reply.text == replies.TOO_MANY_STEPS
    turn = [e for e in logs if e["event"] == "agent.turn"]
    assert [(e["outcome"], e["tool_calls"]) for e in turn] == [("limit", 8)]
    stored = await assistant.store.load("f")
    assert len(stored.messages) == 2
    assert _paired(stored.messages)


async def test_an_unexpected_error_is_logged_and_answered(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """A bug raised inside the turn is logged with its traceback and the person gets an apology."""
    assistant = Assistant(registry, db, settings, model=_first_call_then_offline(_broken))
    with capture_logs() as logs:
        reply = await assistant.reply(conversation="f", caller=ARJUN, text="branches")
    assert reply.text == replies.BROKEN
    failed = [e for e in logs if e["event"] == "agent.turn_failed"]
    assert len(failed) == 1
    assert failed[0]["log_level"] == "error"
    assert failed[0]["exc_info"] is True
    await _second_turn_works(assistant)


async def test_a_card_made_before_a_failure_is_still_handed_over(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """When the model fails after proposing, the reply carries the card and says nothing is done."""
    calls = 0

    async def then_fails(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal calls
        calls += 1
        if calls == 1:
            return ModelResponse(parts=[ToolCallPart("approve_request", {"request_id": 3})])
        raise ModelHTTPError(500, "test-model")

    assistant = Assistant(registry, db, settings, model=FunctionModel(then_fails))
    reply = await assistant.reply(conversation="f", caller=ARJUN, text="approve request 3")
    assert len(reply.proposals) == 1
    assert reply.text.startswith(replies.MODEL_FAILED)
    assert reply.proposals[0].summary in reply.text
    assert "Nothing has been done" in reply.text
    stored = await assistant.store.load("f")
    assert [type(m) for m in stored.messages] == [ModelRequest, ModelResponse]


async def test_one_info_event_per_turn(assistant: Assistant) -> None:
    """Each turn logs one INFO "agent.turn" naming the person, tenant, outcome and cards."""
    with capture_logs() as logs:
        reply = await assistant.reply(conversation="f", caller=ARJUN, text="approve request 3")
    turns = [e for e in logs if e["event"] == "agent.turn"]
    assert len(turns) == 1
    event = turns[0]
    assert (event["log_level"], event["outcome"], event["user"], event["tenant"]) == (
        "info",
        "answered",
        2,
        1,
    )
    assert event["proposals"] == [reply.proposals[0].card_id]
    assert event["tool_calls"] == 1
