"""COUNTERSIGN_MODEL picks the model; a real-shaped OpenAI-compatible server drives a whole turn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from pydantic_ai import models
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel

from bot.agent import Assistant
from bot.agent.models import build_model
from bot.settings import Settings, SettingsError
from tests.agent.conftest import ARJUN, SECRET
from tools import CardSigner, Registry
from tools.db import Database


def test_offline_is_the_default() -> None:
    """With nothing set, the model is the offline FunctionModel."""
    model = build_model(Settings(countersign_secret=SECRET))
    assert isinstance(model, FunctionModel)
    assert model.model_name == "countersign-offline"


def test_openai_chat_with_a_base_url() -> None:
    """openai-chat:<name> plus a base URL talks to that OpenAI-compatible server."""
    model = build_model(
        Settings(
            countersign_model="openai-chat:llama3.1",
            countersign_model_base_url="http://127.0.0.1:1/v1",
        )
    )
    assert isinstance(model, OpenAIChatModel)
    assert (model.model_name, model.base_url) == ("llama3.1", "http://127.0.0.1:1/v1/")


def test_anthropic_with_its_key() -> None:
    """anthropic:<name> builds an Anthropic model with ANTHROPIC_API_KEY."""
    model = build_model(
        Settings(countersign_model="anthropic:claude-sonnet-4-5", anthropic_api_key="k")
    )
    assert isinstance(model, AnthropicModel)
    assert model.model_name == "claude-sonnet-4-5"


@pytest.mark.parametrize(
    ("spec", "variable"),
    [
        ("gpt-4.1", "COUNTERSIGN_MODEL"),
        ("openai:gpt-4.1", "COUNTERSIGN_MODEL"),
        ("openai-chat:", "COUNTERSIGN_MODEL"),
        ("openai-chat:gpt-4.1", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_model_that_cannot_work_names_the_variable(spec: str, variable: str) -> None:
    """An unknown prefix or a missing key is a SettingsError naming what to set."""
    with pytest.raises(SettingsError, match=variable):
        build_model(Settings(countersign_model=spec))


@dataclass
class FakeOpenAI:
    """A chat.completions endpoint that asks for one tool call, then answers in words."""

    tool: str
    arguments: dict[str, Any]
    answer: str
    bodies: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str] = field(default_factory=list)

    async def completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        self.authorizations.append(request.headers.get("Authorization", ""))
        answered = any(message["role"] == "tool" for message in body["messages"])
        message: dict[str, Any] = {"role": "assistant", "content": self.answer}
        if not answered:
            call = {"name": self.tool, "arguments": json.dumps(self.arguments)}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
            }
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.bodies)}",
                "object": "chat.completion",
                "created": 1767225600,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "stop" if answered else "tool_calls",
                    }
                ],
                "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
            }
        )

    def tool_messages(self) -> list[str]:
        return [m["content"] for b in self.bodies for m in b["messages"] if m["role"] == "tool"]


async def _serve(fake: FakeOpenAI) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", fake.completions)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


def _assistant(db: Database, registry: Registry, base_url: str) -> Assistant:
    settings = Settings(
        countersign_model="openai-chat:gpt-4.1",
        countersign_model_base_url=base_url,
        openai_api_key="sk-local-test",
        countersign_secret=SECRET,
    )
    return Assistant(registry, db, settings)


async def test_an_openai_compatible_server_drives_a_turn(
    db: Database, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's tool call runs the registry's list_branches; its final words are the reply."""
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # loopback only, this test only
    fake = FakeOpenAI("list_branches", {}, "You have four branches; MG Road is closed.")
    async for base_url in _serve(fake):
        async with _assistant(db, registry, base_url) as assistant:
            reply = await assistant.reply(
                conversation="o", caller=ARJUN, text="which branches do we have?"
            )
    assert reply.text == "You have four branches; MG Road is closed."
    assert len(fake.bodies) == 2
    assert fake.authorizations[0] == "Bearer sk-local-test"
    offered = {t["function"]["name"]: t["function"] for t in fake.bodies[0]["tools"]}
    assert set(offered) >= {"list_branches", "approve_request", "refund_order", "set_price"}
    assert offered["approve_request"]["parameters"]["required"] == ["request_id"]
    assert "Countersign" in fake.bodies[0]["messages"][0]["content"]
    assert "[from Arjun Mehta, manager] which branches" in json.dumps(fake.bodies[0]["messages"])
    (result,) = fake.tool_messages()
    assert "Koramangala" in result
    assert "MG Road" in result


async def test_a_real_models_proposal_reaches_the_reply_but_not_the_server(
    signer: CardSigner, db: Database, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider's approve_request becomes a card in the reply; the server is sent no token."""
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # loopback only, this test only
    fake = FakeOpenAI(
        "approve_request", {"request_id": 3}, "Press Approve on the card to approve it."
    )
    async for base_url in _serve(fake):
        assistant = _assistant(db, registry, base_url)
        reply = await assistant.reply(
            conversation="o", caller=ARJUN, text="approve the whitefield discount"
        )
        await assistant.aclose()
    (proposal,) = reply.proposals
    assert signer.parse(proposal.card).userid == ARJUN.userid
    (result,) = fake.tool_messages()
    assert "NOT been done" in result
    assert proposal.card not in json.dumps(fake.bodies)
