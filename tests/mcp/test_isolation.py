"""One merchant's MCP tools reach only that merchant's model, by the offline model's own words."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bot.agent import Assistant
from bot.agent.offline import respond
from bot.settings import Settings
from tests.engine.conftest import PRIYA, SAM
from tests.mcp.conftest import connect
from tools import Registry
from tools.db import Database

pytestmark = pytest.mark.slow


class Offered:
    """The offline model, keeping the names of the tools it was offered on each step."""

    def __init__(self) -> None:
        self.names: list[set[str]] = []

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.names.append({tool.name for tool in info.function_tools})
        return await respond(messages, info)


async def test_another_merchants_model_is_never_offered_them(
    registry: Registry, db: Database, hostile_stdio: list[str]
) -> None:
    """Fiesta's model is offered odd__* and can call them; Harbor's is offered none, cannot
    call one by name, and its "tools" answer names none."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    offered = Offered()
    settings = Settings(countersign_model="offline", countersign_secret="s" * 32)
    assistant = Assistant(
        registry, db, settings, model=FunctionModel(offered, model_name="offered")
    )

    fiesta = await assistant.reply(
        conversation="f", caller=PRIYA, text="use odd__sleep with seconds=0"
    )
    harbor_tools = await assistant.reply(conversation="h", caller=SAM, text="tools")
    harbor_call = await assistant.reply(
        conversation="h2", caller=SAM, text="use odd__transfer with to=X amount=1"
    )

    assert "Slept" in fiesta.text
    fiesta_names, *harbor_names = offered.names[0], *offered.names[2:]
    assert "odd__transfer" in fiesta_names
    assert all(not any(n.startswith("odd__") for n in names) for names in harbor_names)
    assert "odd__" not in harbor_tools.text
    assert harbor_call.proposals == []
    assert "not available" in harbor_call.text
