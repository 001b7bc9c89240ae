"""The offline model, streamed at a writing pace: a word at a time, each after a short pause.

``tests.support.streaming.streaming_model`` writes its pieces all at once, which a throttled
stream (Teams') sends as one update. This one gives the same answers (the same tools called,
the same words) as a provider's model writes them, over time, so a stream sees several updates.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from bot.agent.offline import respond

__all__ = ["paced_offline"]


def paced_offline(pause: float = 0.01) -> FunctionModel:
    """The offline model as a streaming one; ``pause``: seconds before each word."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        response = await respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, ToolCallPart):
                call = DeltaToolCall(
                    part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id
                )
                yield {index: call}
            elif isinstance(part, TextPart):
                for word in re.findall(r"\S+\s*|\s+", part.content):
                    await asyncio.sleep(pause)
                    yield word

    return FunctionModel(respond, stream_function=stream, model_name="paced-offline")
