"""Offers the registry's tools to the model; never lets the model choose who is calling.

Every tool function here takes the caller from the run's dependencies and goes through
``Registry.call``, so a write can only ever come back as a proposal. The model is handed
``Result.for_model()``, which holds no signed card; the proposal itself is kept in the
dependencies for the surface to render as buttons.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.tools import Tool as ModelTool
from pydantic_ai.toolsets import FunctionToolset

from bot.adapter import Step, Steps
from tools import MAX_ITEMS, Agent, Caller, Proposal, Registry, Routing, Scope, Tool, json_schema
from tools.errors import CountersignError, InvalidArgumentsError

__all__ = ["TurnDeps", "as_one_card", "build_toolset", "compact_schema"]


@dataclass
class TurnDeps:
    """What one turn's tool calls share: the person who wrote the message, and what they got."""

    registry: Registry
    agent: Agent
    caller: Caller
    proposals: list[Proposal] = field(default_factory=list)
    calls: int = 0
    # Each write call's proposal by its call id, and whom the one card the turn's writes are
    # shown on waits for (None while there is one write, or they cannot be grouped).
    proposed: dict[str, Proposal] = field(default_factory=dict[str, Proposal])
    together: Routing | None = None
    steps: Steps | None = None


ToolFn = Callable[..., Coroutine[Any, Any, dict[str, Any]]]


def build_toolset(tools: Sequence[Tool]) -> FunctionToolset[TurnDeps]:
    """One merchant's tools as the model is offered them, each with its own schema and words."""
    return FunctionToolset(
        [
            ModelTool.from_schema(
                _caller_of(tool.name, write=tool.scope is Scope.WRITE),
                name=tool.name,
                description=tool.description,
                json_schema=copy.deepcopy(_schema_of(tool)),
                takes_ctx=True,
                # Writes run one at a time in the order the model asked for them, so the cards
                # of one turn (shown together as one batch card) are listed in that order.
                sequential=tool.scope is Scope.WRITE,
            )
            for tool in tools
        ]
    )


def _schema_of(tool: Tool) -> dict[str, Any]:
    """A tool's own schema (an MCP server's, compacted like ours), else its arguments model's."""
    if tool.schema is not None:
        return _without_docstring(compact_schema(tool.schema))
    return _model_schema(tool.args)


@functools.cache
def _model_schema(args: type[BaseModel]) -> dict[str, Any]:
    """The schema the model reads for one arguments model, generated once per process.

    Generating it was an eighth of a turn's time with the offline model (a burst of 1,000
    turns generated 15,000 schemas for 15 models that never change); each turn gets a copy.
    """
    return _without_docstring(inline_definitions(compact_schema(json_schema(args))))


def _caller_of(name: str, *, write: bool) -> ToolFn:
    async def call(ctx: RunContext[TurnDeps], **args: Any) -> dict[str, Any]:
        deps = ctx.deps
        deps.calls += 1
        if deps.steps is not None:
            deps.steps(Step(name, write))
        try:
            result = await deps.registry.call(deps.agent, name, args, deps.caller)
        except InvalidArgumentsError as invalid:
            # The model can fix its own arguments; everything else is an answer to relay.
            raise ModelRetry(str(invalid)) from invalid
        except CountersignError as refused:
            raise ToolFailed(str(refused)) from refused
        if result.proposal is not None:
            deps.proposals.append(result.proposal)
            deps.proposed[ctx.tool_call_id or str(len(deps.proposed))] = result.proposal
            if len(deps.proposals) > 1:
                grouped = [p.card_id for p in deps.proposals[:MAX_ITEMS]]
                deps.together = await deps.registry.batches.routing(deps.caller, grouped)
        return result.for_model()

    call.__name__ = name
    return call


async def as_one_card(
    ctx: RunContext[TurnDeps], messages: list[ModelMessage]
) -> list[ModelMessage]:
    """The turn's proposals as the model reads them: each naming whom the one card they are
    shown on waits for.

    The writes of one turn become one card, issued as the strictest of them needs; each tool
    result had named only its own write's approvers, so the reply to "approve requests 1 and
    5" said one manager would do beside a card that needs two.
    """
    deps = ctx.deps
    if deps.together is None:
        return messages
    grouped = {p.card_id for p in deps.proposals[:MAX_ITEMS]}
    shown = {call: p for call, p in deps.proposed.items() if p.card_id in grouped}
    return [_told(message, shown, deps.together) for message in messages]


def _told(message: ModelMessage, shown: dict[str, Proposal], together: Routing) -> ModelMessage:
    if not isinstance(message, ModelRequest):
        return message
    parts = [
        _retold(part, shown[part.tool_call_id], together)
        if isinstance(part, ToolReturnPart) and part.tool_call_id in shown
        else part
        for part in message.parts
    ]
    return replace(message, parts=parts)


def _retold(part: ToolReturnPart, proposal: Proposal, together: Routing) -> ToolReturnPart:
    if not isinstance(part.content, dict):
        return part
    row = {**replace(proposal, routing=together).public(), "shown_on": ONE_CARD}
    return replace(part, content={**part.content, "rows": [row]})


# What the model reads beside a write shown with the turn's others on one card.
ONE_CARD = (
    "one card with the other writes of this turn; waiting_for and approvals_needed are that "
    "card's, the strictest any of its writes needs"
)


def compact_schema(node: Any) -> Any:
    """The JSON schema the model reads, with what only the validator needs taken out.

    Every call is validated against the full schema by ``Registry.call``, so dropping pydantic's
    ``title`` keys, regexes, lengths, numeric bounds, ``additionalProperties`` and the
    ``anyOf [..., null]`` of optional fields changes nothing the model may send (a value out of
    bounds comes back as a retry with the reason), and keeps the tool definitions within the
    token budget of every request. Property *names* are kept even when one is called "title".
    """
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _VALIDATOR_ONLY and isinstance(value, str | int | float | bool):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        else:
            out[key] = compact_schema(value)
    # After the alternatives themselves are compact, so bare types can collapse.
    return _unwrap_optional(out)


def _without_docstring(root: dict[str, Any]) -> dict[str, Any]:
    """The arguments model's docstring repeats the tool's own description; the model reads one."""
    return {key: value for key, value in root.items() if key != "description"}


_VALIDATOR_ONLY = (
    "title",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "additionalProperties",
)
_NULL = {"type": "null"}


def _unwrap_optional(node: dict[str, Any]) -> dict[str, Any]:
    """``{anyOf: [S, null], default: null}`` → ``S``: leaving the field out means the same.

    Alternatives that are bare types collapse into one ``type`` list (``string`` or
    ``integer``), which says the same in fewer tokens.
    """
    options = node.get("anyOf")
    if not isinstance(options, list):
        return node
    optional = "default" in node and node["default"] is None
    kept = [option for option in options if not (optional and option == _NULL)]
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    if optional:
        rest.pop("default")
    if len(kept) == 1 and isinstance(kept[0], dict):
        return {**kept[0], **rest}
    if all(isinstance(option, dict) and option.keys() == {"type"} for option in kept):
        return {"type": [option["type"] for option in kept], **rest}
    return {"anyOf": kept, **rest} if optional else node


def inline_definitions(root: dict[str, Any]) -> dict[str, Any]:
    """Replaces ``$ref``s to ``$defs`` with the definitions themselves (enums, here).

    A reference and its definition cost more tokens than the enum written in place.
    """
    definitions = root.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: walk(v) for k, v in node.items() if k != "$ref"}
            return {**walk(definitions[ref.removeprefix("#/$defs/")]), **rest}
        return {k: walk(v) for k, v in node.items() if k != "$defs"}

    return walk(root)  # type: ignore[no-any-return]
