"""A provider's streamed answer (an OpenAI-compatible server's SSE) reaches the stream as written."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from pydantic_ai import models

from bot.agent import Assistant
from bot.settings import Settings
from tests.agent.conftest import ARJUN, SECRET
from tests.support.streaming import RecordedStream
from tools import Registry
from tools.db import Database

_WORDS = ["You have ", "four branches; ", "MG Road ", "is closed."]


class StreamingOpenAI:
    """chat.completions as server-sent events: a tool call first, then the answer in pieces."""

    def __init__(self) -> None:
        self.streamed: list[bool] = []

    async def completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.streamed.append(bool(body.get("stream")))
        answered = any(message["role"] == "tool" for message in body["messages"])
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if answered:
            deltas: list[dict[str, Any]] = [{"content": words} for words in _WORDS]
            finish = "stop"
        else:
            call = {"name": "list_branches", "arguments": "{}"}
            deltas = [
                {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": call}]}
            ]
            finish = "tool_calls"
        for index, delta in enumerate([{"role": "assistant", **deltas[0]}, *deltas[1:]]):
            last = index == len(deltas) - 1
            await response.write(_event(body["model"], delta, finish if last else None))
        await response.write(b"data: [DONE]\n\n")
        return response


def _event(model: str, delta: dict[str, Any], finish: str | None) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


@pytest.fixture
async def base_url() -> AsyncIterator[tuple[str, StreamingOpenAI]]:
    fake = StreamingOpenAI()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.completions)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1", fake
    finally:
        await runner.cleanup()


async def test_a_providers_words_stream_in_order_and_its_tool_call_never(
    db: Database,
    registry: Registry,
    base_url: tuple[str, StreamingOpenAI],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both requests stream; the words arrive piece by piece, the list_branches call not at all."""
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # loopback only, this test only
    url, fake = base_url
    settings = Settings(
        countersign_model="openai-chat:gpt-4.1",
        countersign_model_base_url=url,
        openai_api_key="sk-local-test",
        countersign_secret=SECRET,
    )
    stream = RecordedStream()
    async with Assistant(registry, db, settings) as assistant:
        reply = await assistant.reply(
            conversation="p", caller=ARJUN, text="which branches?", stream=stream
        )
    assert fake.streamed == [True, True]
    assert stream.pieces == _WORDS
    assert reply.text == "".join(_WORDS)
