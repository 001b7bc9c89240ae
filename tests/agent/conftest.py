"""An offline assistant over the demo merchant, a model that records what it was shown, callers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bot.agent import Assistant
from bot.agent.offline import respond
from bot.settings import Settings
from tools import Caller, CardSigner, Registry, Role
from tools.db import Database
from tools.toolsets.merchant import build_registry

SECRET = "test-secret-0123456789"

PRIYA = Caller(1, 1, Role.OWNER, "Priya Raman")
ARJUN = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
MEERA = Caller(3, 1, Role.MANAGER, "Meera Iyer")
RAVI = Caller(4, 1, Role.STAFF, "Ravi Kumar")
SAM = Caller(5, 2, Role.OWNER, "Sam Lee")


@dataclass
class Recorder:
    """The offline model, keeping every message list it was sent."""

    seen: list[list[ModelMessage]] = field(default_factory=list)

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        return await respond(messages, info)

    def model(self) -> FunctionModel:
        return FunctionModel(self, model_name="recorded-offline")

    def text(self) -> str:
        """Everything the model was sent, as JSON text."""
        return "\n".join(ModelMessagesTypeAdapter.dump_json(seen).decode() for seen in self.seen)


@pytest.fixture
def signer() -> CardSigner:
    return CardSigner([SECRET])


@pytest.fixture
def registry(db: Database, signer: CardSigner) -> Registry:
    return build_registry(db, signer)


@pytest.fixture
def settings() -> Settings:
    return Settings(countersign_model="offline", countersign_secret=SECRET)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def assistant(
    db: Database, registry: Registry, settings: Settings, recorder: Recorder
) -> Assistant:
    return Assistant(registry, db, settings, model=recorder.model())


def tool_calls(messages: Sequence[ModelMessage]) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls in a history, with their arguments as a dict."""
    return [
        (part.tool_name, part.args_as_dict())
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]
