"""One thread's turns run one at a time across processes: the second answer sees the first."""

from __future__ import annotations

import asyncio

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bot.sandbox import WebApi as FakeSlack
from tests.reliability.harness import CHANNEL, in_process_bot, signed_event, wait_until
from tests.support.slack_requests import message
from tools.db import Database


class Gated:
    """A model that holds its first answer until the test opens the gate; records each prompt
    with the earlier prompts its history held."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.seen: list[tuple[str, list[str]]] = []

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts = [
            str(part.content)
            for m in messages
            if isinstance(m, ModelRequest)
            for part in m.parts
            if isinstance(part, UserPromptPart)
        ]
        self.seen.append((prompts[-1], prompts[:-1]))
        if len(self.seen) == 1:
            await self.gate.wait()
        return ModelResponse(parts=[TextPart(f"answer to {prompts[-1]!r}")])


async def test_a_follow_up_reaching_another_process_waits_and_sees_the_first_turn(
    db: Database, slack: FakeSlack
) -> None:
    """Two servers on one database, as two workers are: a follow-up in a thread whose first
    message is still being answered elsewhere waits for it, and its model sees that exchange."""
    model = Gated()
    thread = "1800000000.000001"
    first = message(
        "UARJUN", "<@UBOT> show branches", channel=CHANNEL, ts=thread, kind="app_mention"
    )
    follow_up = message(
        "UARJUN",
        "<@UBOT> and the closed ones?",
        channel=CHANNEL,
        ts="1800000000.000002",
        thread_ts=thread,
        kind="app_mention",
    )
    async with (
        in_process_bot(db, slack, model=FunctionModel(model)) as one,
        in_process_bot(db, slack, model=FunctionModel(model)) as other,
    ):
        try:
            assert await one.post(*signed_event(first)) == 200

            async def first_running() -> bool:
                return len(model.seen) == 1

            await wait_until(first_running, what="the first turn at the model")
            assert await other.post(*signed_event(follow_up)) == 200
            await asyncio.sleep(1.0)  # time enough for the follow-up to reach the model, if let
            assert len(model.seen) == 1, model.seen
        finally:
            model.gate.set()
        await one.settle()
        await other.settle()
    (asked, before), (asked_next, before_next) = model.seen
    assert asked.endswith("show branches") and before == []
    assert asked_next.endswith("and the closed ones?")
    assert before_next == [asked]
