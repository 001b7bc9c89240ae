"""Runs one chat turn through pydantic-ai and remembers it; never performs a write.

A turn: read the conversation, run the model with the registry's tools as the person who wrote
the message, keep what the turn added, and answer with the model's words and any approval
cards it proposed. A failing or slow model still gets the person an answer, and leaves the
history complete (no tool call without its result), so the next message works.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Self

import structlog
from pydantic_ai import Agent as ModelLoop
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.exceptions import AgentRunError, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.usage import UsageLimits
from sqlalchemy.exc import SQLAlchemyError
from structlog.typing import FilteringBoundLogger as Log

from bot.adapter import Steps, Stream
from bot.agent import replies
from bot.agent.history import MAX_MESSAGES, ConversationStore, Stored
from bot.agent.models import build_model
from bot.agent.prompts import INSTRUCTIONS, note, spoken
from bot.agent.streaming import Feed, streams
from bot.agent.toolset import TurnDeps, as_one_card, build_toolset
from bot.settings import Settings
from tools import ALL_TOOLS, Agent, Caller, Proposal, Registry
from tools.db import Database

__all__ = ["DEFAULT_LIMITS", "DEFAULT_TIMEOUT", "Assistant", "Reply"]

log = structlog.get_logger(__name__)

DEFAULT_TIMEOUT = 60.0
_TOOLSETS = 64  # toolsets kept: one per distinct set of tools (merchants with MCP sources)
# Enough for "look it up, then propose" with a retry or two; a model looping on tools stops here.
DEFAULT_LIMITS = UsageLimits(request_limit=8, tool_calls_limit=12)


# What a tool meets while the database restarts: SQLAlchemy's errors once connected, the
# driver's refused or reset connection while connecting (as ``bot.presses.ladder`` has it).
_DATABASE_DOWN = (SQLAlchemyError, ConnectionError)


@dataclass(frozen=True)
class Reply:
    """What to post in the thread: plain text (the surface escapes it) and this turn's cards."""

    text: str
    proposals: list[Proposal]


@dataclass(frozen=True, slots=True)
class _Turn:
    outcome: str
    text: str
    added: list[ModelMessage]
    requests: int = 0


class Assistant:
    """The chat agent over one registry: one conversation per key, one person per message.

    Its conversations are kept in ``db``, the database the registry was built with."""

    def __init__(
        self,
        registry: Registry,
        db: Database,
        settings: Settings,
        *,
        agent: Agent = ALL_TOOLS,
        model: Model | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        limits: UsageLimits = DEFAULT_LIMITS,
        max_messages: int = MAX_MESSAGES,
    ) -> None:
        self.registry = registry
        self.agent = agent
        self.model = model if model is not None else build_model(settings)
        self.timeout = timeout
        self.limits = limits
        self.store = ConversationStore(db, max_messages=max_messages)
        self._loop = ModelLoop(
            self.model,
            deps_type=TurnDeps,
            output_type=str,
            instructions=INSTRUCTIONS,
            capabilities=[ProcessHistory(as_one_card)],
        )
        # Toolsets by the tools they offer: merchants with the same tools share one.
        self._toolsets: OrderedDict[tuple[int, ...], FunctionToolset[TurnDeps]] = OrderedDict()

    async def __aenter__(self) -> Self:
        """Holds the model's HTTP connections open until ``__aexit__`` (a provider's pool)."""
        await self.model.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.model.__aexit__(None, None, None)

    async def aclose(self) -> None:
        """Closes the model's HTTP connections; call once on shutdown if not used with ``async with``.

        A provider closes the client it owns when its last holder leaves; holding it for a
        moment and leaving is how to say "nobody holds it now". Without this, a process that
        stops leaves sockets open (and tests fail on ResourceWarning).
        """
        await self.model.__aenter__()
        await self.model.__aexit__(None, None, None)

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> Reply:
        """Answers one message in a conversation, acting as ``caller`` and nobody else.

        ``steps`` is told of each tool call as it starts (what the surface shows as a status).
        ``stream`` is given the model's words as they are written, when the model streams (the
        offline model does not); the reply's text is then everything fed to it, in order, and
        an apology for a run that broke off follows what was already shown.
        """
        started = time.perf_counter()
        bound = log.bind(
            conversation=conversation,
            tenant=caller.tenantid,
            user=caller.userid,
            model=self.model.model_name,
        )
        stored = await self.store.load(conversation)
        if stored.tenant_id is not None and stored.tenant_id != caller.tenantid:
            # A thread keeps one merchant's data in its history; another merchant's person
            # (a shared channel) must not get a model that has read it.
            bound.warning("agent.foreign_conversation", owner=stored.tenant_id)
            return Reply(replies.FOREIGN, [])
        deps = TurnDeps(self.registry, self.agent, caller, steps=steps)
        feed = Feed(stream) if stream is not None and streams(self.model) else None
        turn = await self._run(spoken(caller, text), stored, deps, bound, feed)
        await self._keep(conversation, turn.added, caller.tenantid, stored, bound)
        bound.info(
            "agent.turn",
            outcome=turn.outcome,
            tool_calls=deps.calls,
            proposals=[p.card_id for p in deps.proposals],
            requests=turn.requests,
            took_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return Reply(_shown(turn, feed), list(deps.proposals))

    async def record(self, *, conversation: str, text: str) -> None:
        """Adds a note (an approval, a rejection) that the model reads on the next turn."""
        stored = await self.store.load(conversation)
        added: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(note(text))])]
        await self.store.append(conversation, added, tenant_id=None, seen=stored)
        log.info("agent.recorded", conversation=conversation)

    async def _run(
        self,
        prompt: str,
        stored: Stored,
        deps: TurnDeps,
        bound: Log,
        feed: Feed | None = None,
    ) -> _Turn:
        try:
            async with asyncio.timeout(self.timeout):
                result = await self._loop.run(
                    prompt,
                    message_history=stored.messages,
                    deps=deps,
                    usage_limits=self.limits,
                    toolsets=[await self._tools(deps.caller.tenantid)],
                    event_stream_handler=feed,
                )
        except TimeoutError:
            bound.warning("agent.timeout", after_s=self.timeout)
            return _failed("timeout", prompt, deps)
        except UsageLimitExceeded as limited:
            bound.warning("agent.usage_limit", error=str(limited))
            return _failed("limit", prompt, deps)
        except AgentRunError as failed:
            bound.warning("agent.model_error", error=f"{type(failed).__name__}: {failed}")
            return _failed("model_error", prompt, deps)
        except _DATABASE_DOWN:
            if deps.proposals:  # real cards, said and posted with the apology
                bound.exception("agent.turn_failed")
                return _failed("error", prompt, deps)
            # Nothing made, nothing kept: the turn tells the person the database is down and to
            # send it again, which "something went wrong on my side" did not say.
            raise
        except Exception:  # noqa: BLE001 - the turn's edge: logged with its traceback, answered politely
            bound.exception("agent.turn_failed")
            return _failed("error", prompt, deps)
        text = result.output.strip() or replies.empty(deps.proposals)
        return _Turn("answered", text, result.new_messages(), result.usage.requests)

    async def _tools(self, tenantid: int) -> FunctionToolset[TurnDeps]:
        """The merchant's toolset, built once per set of tools and then reused.

        The toolset holds no caller (each call reads it from the run's deps), so turns share
        it. Building it per turn was a tenth of a turn's CPU with the offline model. A merchant
        with its own MCP sources gets a toolset of its own, rebuilt when its servers' tool
        lists change; every other merchant shares the reference one.
        """
        tools = await self.registry.offered(self.agent, tenantid)
        key = tuple(map(id, tools))
        toolset = self._toolsets.get(key)
        if toolset is None:
            toolset = self._toolsets[key] = build_toolset(tools)
            while len(self._toolsets) > _TOOLSETS:
                self._toolsets.popitem(last=False)
        else:
            self._toolsets.move_to_end(key)
        return toolset

    async def _keep(
        self,
        conversation: str,
        added: Sequence[ModelMessage],
        tenant_id: int,
        stored: Stored,
        bound: Log,
    ) -> None:
        try:
            await self.store.append(conversation, added, tenant_id=tenant_id, seen=stored)
        except Exception:  # noqa: BLE001 - the answer (and its cards) still reach the person
            bound.exception("agent.history_not_saved")


def _shown(turn: _Turn, feed: Feed | None) -> str:
    """What the person reads: the turn's text, or with a stream everything fed to it first.

    The model's answer is its last response's words, which the stream already has; an apology
    (a run that timed out midway) or an answer the stream somehow lacks follows it.
    """
    fed = feed.text.rstrip() if feed is not None else ""
    if not fed:
        return turn.text
    if turn.outcome == "answered" and turn.text in fed:
        return fed
    return f"{fed}\n\n{turn.text}"


def _failed(kind: str, prompt: str, deps: TurnDeps) -> _Turn:
    """A whole turn to store for a broken run: the message and the apology, nothing half-done."""
    text = replies.apology(kind, deps.proposals)
    added: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(prompt)]),
        ModelResponse(parts=[TextPart(text)]),
    ]
    return _Turn(kind, text, added)
