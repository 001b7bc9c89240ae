"""A model that streams: the offline model's answers written a few characters at a time, and a
stream that records (or fails) what it is given."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from bot.agent.offline import respond

PIECE = 7  # characters per text delta: an answer arrives in many pieces


async def _written(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    """The offline model's response, its text in pieces, its tool calls whole."""
    response = await respond(messages, info)
    for index, part in enumerate(response.parts):
        if isinstance(part, TextPart):
            for at in range(0, len(part.content), PIECE):
                yield part.content[at : at + PIECE]
        elif isinstance(part, ToolCallPart):
            args = part.args if isinstance(part.args, str) else json.dumps(part.args or {})
            yield {index: DeltaToolCall(part.tool_name, args, tool_call_id=part.tool_call_id)}


def streaming_model() -> FunctionModel:
    """The offline model's answers, streamed as a provider's model streams them."""
    return FunctionModel(respond, stream_function=_written, model_name="streamed-offline")


@dataclass
class RecordedStream:
    """A stream keeping every piece appended, failing from the ``fail_at``-th append on."""

    pieces: list[str] = field(default_factory=list)
    fail_at: int | None = None
    closed: bool = False

    async def append(self, text: str) -> None:
        if self.fail_at is not None and len(self.pieces) >= self.fail_at:
            return  # failed: takes no more, as a platform's stream does
        self.pieces.append(text)

    @property
    def message(self) -> str | None:
        return None

    async def close(self) -> str:
        self.closed = True
        return "".join(self.pieces)
