"""Keeps each conversation's model history in the database, bounded; never loses a racing turn.

A turn reads the history, runs the model (seconds), then appends what it added. A thread's
turns take turns (``bot.runtime.turn_order``), but one that waited too long runs alongside another;
the second to finish finds the version moved on, re-reads, and appends its own messages after
the first one's. It never re-runs the model to "retry": that would
propose the same change twice. Each turn's messages are complete (every tool call answered), so
appending one whole turn after another keeps the history valid on any process.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, cast

import structlog
from pydantic import ValidationError
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ToolReturnPart,
    UserPromptPart,
)
from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from tools.db import ConversationRow, Database

__all__ = ["ConversationStore", "Stored", "starts_turn", "trim"]

log = structlog.get_logger(__name__)

MAX_MESSAGES = 40
MAX_CHARS = 200_000
_ATTEMPTS = 8

# Core statements built once: a turn reads and saves its conversation through these instead of
# an ORM session, whose unit of work cost more than the single statement each one runs. Their
# compiled forms are cached by SQLAlchemy; only the bound values change from turn to turn.
_TABLE = cast("Table", ConversationRow.__table__)
_LOAD = select(_TABLE.c.messages, _TABLE.c.version, _TABLE.c.tenant_id).where(
    _TABLE.c.key == bindparam("key")
)
_CREATE = insert(_TABLE)
_MOVE_ON = (
    update(_TABLE)
    .where(_TABLE.c.key == bindparam("at_key"), _TABLE.c.version == bindparam("seen"))
    .values(
        messages=bindparam("new_messages"),
        version=bindparam("new_version"),
        tenant_id=bindparam("new_tenant"),
        updated_at=bindparam("new_at"),
    )
)


@dataclass(frozen=True, slots=True)
class Stored:
    """A conversation as read: its messages, the version they came from, and its merchant."""

    messages: list[ModelMessage]
    version: int
    tenant_id: int | None


class ConversationStore:
    """The ``conversations`` table, one row per conversation key."""

    def __init__(
        self, db: Database, *, max_messages: int = MAX_MESSAGES, max_chars: int = MAX_CHARS
    ) -> None:
        self.db = db
        self.max_messages = max_messages
        self.max_chars = max_chars

    async def load(self, key: str) -> Stored:
        async with self.db.begin() as conn:
            row = (await conn.execute(_LOAD, {"key": key})).first()
        if row is None:
            return Stored([], 0, None)
        try:
            messages = list(ModelMessagesTypeAdapter.validate_json(row.messages))
        except ValidationError:
            # A history this version cannot read (written by another release, or damaged)
            # would fail every turn of the thread forever; starting afresh keeps it usable,
            # and the next save replaces it (the version check still holds).
            log.exception("conversation.unreadable", conversation=key)
            messages = []
        return Stored(messages, row.version, row.tenant_id)

    async def append(
        self, key: str, added: Sequence[ModelMessage], *, tenant_id: int | None, seen: Stored
    ) -> None:
        """Adds one turn's messages (or a note) after whatever the conversation holds now."""
        current = seen
        for _ in range(_ATTEMPTS):
            blob = self._dump([*current.messages, *added])
            if await self._save(key, blob, tenant_id or current.tenant_id, current.version):
                return
            current = await self.load(key)
        # Only reachable if eight other turns each saved between our read and our write.
        raise RuntimeError(f"conversation {key!r} is too busy to save; retried {_ATTEMPTS} times")

    def _dump(self, messages: list[ModelMessage]) -> str:
        kept = trim(_answered(_without_instructions(messages)), self.max_messages)
        blob = ModelMessagesTypeAdapter.dump_json(kept).decode()
        while len(blob) > self.max_chars:
            shorter = trim(kept, len(kept) - 1)
            if len(shorter) == len(kept):
                break
            kept = shorter
            blob = ModelMessagesTypeAdapter.dump_json(kept).decode()
        return blob

    async def _save(self, key: str, blob: str, tenant_id: int | None, version: int) -> bool:
        now = datetime.now(UTC)
        if version == 0:
            row = {"key": key, "tenant_id": tenant_id, "messages": blob, "version": 1}
            try:
                async with self.db.begin() as conn:
                    await conn.execute(_CREATE, {**row, "updated_at": now})
            except IntegrityError:
                # Another turn created the conversation first; re-read and append after it.
                return False
            return True
        values = {"new_messages": blob, "new_version": version + 1, "new_tenant": tenant_id}
        async with self.db.begin() as conn:
            result = await conn.execute(
                _MOVE_ON, {**values, "new_at": now, "at_key": key, "seen": version}
            )
            moved = _matched(result)
        if not moved:
            log.debug("conversation.version_moved", conversation=key, version=version)
        return moved


def starts_turn(message: ModelMessage) -> bool:
    """A place the history may be cut: a request carrying a prompt and no tool results."""
    return (
        isinstance(message, ModelRequest)
        and any(isinstance(part, UserPromptPart) for part in message.parts)
        and not any(isinstance(part, ToolReturnPart) for part in message.parts)
    )


def trim(messages: list[ModelMessage], limit: int) -> list[ModelMessage]:
    """The last ``limit`` messages or fewer, cut only where a turn starts.

    Cutting between a tool call and its return would leave a history every provider refuses
    ("tool_call_id not found"), so when no cut fits the limit the latest turn is kept whole.
    """
    if len(messages) <= limit:
        return messages
    earliest = max(len(messages) - max(limit, 0), 0)
    cuts = [i for i, message in enumerate(messages) if starts_turn(message)]
    later = [i for i in cuts if i >= earliest]
    if later:
        return messages[later[0] :]
    return messages[cuts[-1] :] if cuts else messages


def _answered(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The history without a trailing response whose tool calls never got their results.

    pydantic-ai refuses a new prompt after unanswered tool calls ("unprocessed tool calls"),
    so one stored by mistake would wedge the thread: every later message would fail.
    """
    end = len(messages)
    while end and _calls_tools(messages[end - 1]):
        end -= 1
    return messages[:end]


def _calls_tools(message: ModelMessage) -> bool:
    return isinstance(message, ModelResponse) and bool(message.tool_calls)


def _without_instructions(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Instructions are sent fresh on every run; storing a copy per request only takes space."""
    return [
        replace(m, instructions=None) if isinstance(m, ModelRequest) and m.instructions else m
        for m in messages
    ]


def _matched(result: Any) -> bool:
    # An UPDATE's result carries rowcount; the generic Result type does not declare it.
    return bool(result.rowcount == 1)
