"""Offers the registry's tools to the model; never lets the model choose who is calling.

Every tool function here takes the caller from the run's dependencies and goes through
``Registry.call``, so a write can only ever come back as a proposal. The model is handed
``Result.for_model()``, which holds no signed card; the proposal itself is kept in the
dependencies for the surface to render as buttons.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import Tool as ModelTool
from pydantic_ai.toolsets import FunctionToolset

from tools import schema
from tools.agent import Agent
from tools.caller import Caller
from tools.errors import CountersignError, InvalidArgumentsError
from tools.registry import Registry
from tools.tool import Proposal

__all__ = ["TurnDeps", "build_toolset", "compact_schema"]


@dataclass
class TurnDeps:
    """What one turn's tool calls share: the person who wrote the message, and what they got."""

    registry: Registry
    agent: Agent
    caller: Caller
    proposals: list[Proposal] = field(default_factory=list)
    calls: int = 0


ToolFn = Callable[..., Coroutine[Any, Any, dict[str, Any]]]


def build_toolset(registry: Registry, agent: Agent) -> FunctionToolset[TurnDeps]:
    """The agent's tools, each described by its own schema and docstring."""
    return FunctionToolset(
        [
            ModelTool.from_schema(
                _caller_of(tool.name),
                name=tool.name,
                description=tool.description,
                json_schema=compact_schema(schema.json_schema(tool.args)),
                takes_ctx=True,
            )
            for tool in registry.tools_for(agent)
        ]
    )


def _caller_of(name: str) -> ToolFn:
    async def call(ctx: RunContext[TurnDeps], **args: Any) -> dict[str, Any]:
        deps = ctx.deps
        deps.calls += 1
        try:
            result = await deps.registry.call(deps.agent, name, args, deps.caller)
        except InvalidArgumentsError as invalid:
            # The model can fix its own arguments; everything else is an answer to relay.
            raise ModelRetry(str(invalid)) from invalid
        except CountersignError as refused:
            raise ToolFailed(str(refused)) from refused
        if result.proposal is not None:
            deps.proposals.append(result.proposal)
        return result.for_model()

    call.__name__ = name
    return call


def compact_schema(node: Any) -> Any:
    """The JSON schema the model reads, with what only the validator needs taken out.

    Every call is validated against the full schema by ``Registry.call``, so dropping pydantic's
    ``title`` keys, regexes, string lengths and the ``anyOf [..., null]`` of optional fields
    changes nothing the model may send, and takes about a tenth off every request's tool
    definitions. Property *names* are kept even when one is called "title".
    """
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = _unwrap_optional(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _VALIDATOR_ONLY and isinstance(value, str | int):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        else:
            out[key] = compact_schema(value)
    return out


_VALIDATOR_ONLY = ("title", "pattern", "minLength", "maxLength")
_NULL = {"type": "null"}


def _unwrap_optional(node: dict[str, Any]) -> dict[str, Any]:
    """``{anyOf: [S, null], default: null}`` → ``S``: leaving the field out means the same."""
    options = node.get("anyOf")
    if "default" not in node or node["default"] is not None or not isinstance(options, list):
        return node
    kept = [option for option in options if option != _NULL]
    if len(kept) != 1 or len(options) != 2 or not isinstance(kept[0], dict):
        return node
    rest = {key: value for key, value in node.items() if key not in ("anyOf", "default")}
    return {**kept[0], **rest}
