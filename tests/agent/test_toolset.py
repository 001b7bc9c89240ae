"""The tools the model is offered: the agent's own, with compact schemas, within a token budget."""

from __future__ import annotations

import json

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from bench.tokens import encoding
from bot.agent import Assistant
from bot.agent.prompts import INSTRUCTIONS
from bot.agent.toolset import compact_schema, inline_definitions
from bot.settings import Settings
from tests.agent.conftest import ARJUN
from tools import Agent, Registry
from tools.db import Database
from tools.tool import Scope
from tools.toolsets.merchant import DEFAULT_AGENT, READ_ONLY_AGENT

# cl100k tokens of the instructions and every tool definition, as `make bench` counts them.
TOKEN_BUDGET = 2_000


async def _offered(
    db: Database, registry: Registry, settings: Settings, agent: Agent = DEFAULT_AGENT
) -> list[ToolDefinition]:
    offered: list[ToolDefinition] = []

    async def look(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.extend(info.function_tools)
        assert info.instructions == INSTRUCTIONS
        return ModelResponse(parts=[TextPart("ok")])

    assistant = Assistant(registry, db, settings, agent=agent, model=FunctionModel(look))
    await assistant.reply(conversation="s", caller=ARJUN, text="hello")
    return offered


async def test_every_tool_of_the_agent_is_offered_with_its_schema(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """The model gets each allowed tool's name, description and argument fields, no titles."""
    offered = await _offered(db, registry, settings)
    tools = await registry.offered(DEFAULT_AGENT, 1)
    assert [t.name for t in offered] == [t.name for t in tools]
    for definition, tool in zip(offered, tools, strict=True):
        assert definition.description == tool.description
        schema = definition.parameters_json_schema
        assert set(schema.get("properties", {})) == set(tool.args.model_fields)
        assert '"title"' not in json.dumps({k: v for k, v in schema.items() if k != "properties"})


async def test_a_read_only_agent_is_offered_no_write(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """The read-only agent's model never sees a write tool at all."""
    offered = {t.name for t in await _offered(db, registry, settings, READ_ONLY_AGENT)}
    writes = {t.name for t in await registry.offered(DEFAULT_AGENT, 1) if t.scope is Scope.WRITE}
    assert offered
    assert not offered & writes


def test_compact_schema_drops_only_what_the_validator_needs() -> None:
    """Titles, patterns and optional-null wrappers go; a field named "title" and its type stay."""
    schema = {
        "title": "Args",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "title": {"title": "Title", "type": "string", "pattern": "^x", "maxLength": 9},
            "branch": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Which branch.",
            },
            "status": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": "pending"},
        },
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "branch": {"type": "string", "description": "Which branch."},
            "status": {"type": ["string", "null"], "default": "pending"},
        },
    }


def test_enum_references_are_written_in_place() -> None:
    """A $ref to an enum in $defs becomes the enum itself, and $defs goes."""
    schema = {
        "$defs": {"Kind": {"enum": ["stock", "refund"], "type": "string"}},
        "properties": {"kind": {"$ref": "#/$defs/Kind", "description": "Omit for all."}},
        "type": "object",
    }
    assert inline_definitions(schema) == {
        "properties": {
            "kind": {"enum": ["stock", "refund"], "type": "string", "description": "Omit for all."}
        },
        "type": "object",
    }


async def test_prompt_and_tool_definitions_fit_the_budget(
    db: Database, registry: Registry, settings: Settings
) -> None:
    """Instructions stay near 250 tokens and, with every tool definition, under the budget."""
    offered = await _offered(db, registry, settings)
    definitions = [
        {"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}
        for t in offered
    ]
    enc = encoding()
    tools = json.dumps([{"type": "function", "function": d} for d in definitions])
    assert len(enc.encode(INSTRUCTIONS)) < 300
    assert len(enc.encode(INSTRUCTIONS)) + len(enc.encode(tools)) < TOKEN_BUDGET
    assert compact_schema(definitions) == definitions
