"""The fake Slack of the soak: the sandbox's Web API with its messages indexed; never decides.

``bot.sandbox.WebApi`` finds a message by scanning every message it holds, which is fine for a
test and quadratic over a soak's tens of thousands. This one keeps the same messages in the
same workspace, plus an index by place, by thread and by card id, and the modal each press's
trigger opened, so the load generator can wait for what a person would see.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

from bot.sandbox import WebApi
from bot.sandbox.workspace import Message, Workspace
from bot.slack.blocks import card_id_of_block

__all__ = ["SoakSlack", "actions_of", "card_of"]

Json = dict[str, Any]


def actions_of(message: Message) -> list[Json]:
    """The buttons a message shows now (none once its card is decided)."""
    return [e for b in message.blocks if b.get("type") == "actions" for e in b["elements"]]


def card_of(message: Message) -> str | None:
    """The card (or card of several) a message shows, read from its buttons' block id."""
    block = next((b for b in message.blocks if b.get("type") == "actions"), None)
    return card_id_of_block(str(block["block_id"])) if block is not None else None


class _Indexed(Workspace):
    """A workspace that finds a message by place, thread or card without a scan."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.at: dict[tuple[str, str], Message] = {}
        self.threads: dict[tuple[str, str], list[Message]] = defaultdict(list)
        self.by_card: dict[str, list[Message]] = defaultdict(list)
        self.ephemeral: dict[str, list[Message]] = defaultdict(list)
        self.changed = asyncio.Event()

    def message(self, channel: str, ts: str) -> Message:
        found = self.at.get((channel, ts))
        if found is None:
            raise StopIteration
        return found

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        return list(self.threads.get((channel, thread_ts), ()))

    def post(self, message: Message) -> Message:
        self.messages.append(message)
        self.at[(message.channel, message.ts)] = message
        if message.thread_ts:
            self.threads[(message.channel, message.thread_ts)].append(message)
        if message.ephemeral_to:
            self.ephemeral[message.ephemeral_to].append(message)
        self._card(message)
        self._poke()
        return message

    def update(self, message: Message, *, text: str, blocks: list[Json]) -> None:
        message.text, message.blocks, message.edited = text, blocks, True
        self._card(message)
        self._poke()

    def _card(self, message: Message) -> None:
        card = card_of(message)
        if card is not None and message not in self.by_card[card]:
            self.by_card[card].append(message)

    def _poke(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


class SoakSlack(WebApi):
    """The sandbox's Web API over an indexed workspace; ``opened`` is each trigger's modal."""

    def __init__(self, *, team_id: str) -> None:
        super().__init__(_Indexed(team_id=team_id), team_id=team_id)
        self.opened: dict[str, Json] = {}
        self.methods: dict[str, int] = defaultdict(int)

    @property
    def indexed(self) -> _Indexed:
        workspace = self.workspace
        assert isinstance(workspace, _Indexed)
        return workspace

    def called(self, method: str) -> list[Json]:
        raise NotImplementedError("the soak reads its own indexes, not the call list")

    async def _views_open(self, params: Json) -> Json:
        answer = await super()._views_open(params)
        if answer.get("ok"):
            self.opened[str(params.get("trigger_id"))] = dict(answer["view"])
        return answer

    async def wait(self, within: float) -> None:
        """Returns when any message is posted or changed, or after ``within`` seconds."""
        try:
            await asyncio.wait_for(self.indexed.changed.wait(), within)
        except TimeoutError:
            return
