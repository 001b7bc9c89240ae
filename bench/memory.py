"""Memory: resident size of 1,000 loaded conversations and of 10,000 proposed cards.

Every measurement is a fresh process (``python -m bench.memory KIND COUNT URL``) that imports
the same modules, opens the same database and warms the same code path once; the baseline is
the same process with a count of 0. The figure is the difference of their resident set sizes
(VmRSS, after a full garbage collection).

- conversations: 1,000 conversations, each a copy of a real six-turn offline conversation, are
  stored in one transaction, then all loaded back through ``ConversationStore.load`` and kept,
  as a process serving them would hold them.
- cards: 10,000 stock adjustments are proposed through ``Registry.call``; the process keeps
  nothing afterwards (cards live in the database), so this shows what proposing leaves behind.
  Proposing 10,000 cards takes one to two minutes on a two-core machine, so this figure is one
  pair of processes, not five, to keep ``make bench`` near ten minutes.
"""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import sys
from asyncio.subprocess import PIPE
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter
from tqdm import tqdm

from bench.stats import Figure

__all__ = ["run"]

# kind → (count, runs)
SIZES = {"conversations": (1_000, 5), "cards": (10_000, 1)}
_TURNS = (
    "show branches",
    "pending requests",
    "stock at Indiranagar",
    "sales today",
    "request 1",
    "help",
)
_LIMIT_S = 300.0


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


async def _conversations(url: str, count: int) -> list[Any]:
    from bench.stage import CARD_SECRET
    from bot.agent import Assistant
    from bot.settings import Settings
    from tools import Caller, CardSigner, Role
    from tools.db import ConversationRow, Database
    from tools.toolsets.merchant import build_registry

    db = Database(url)
    registry = build_registry(db, CardSigner([CARD_SECRET]))
    assistant = Assistant(registry, db, Settings(_env_file=None, countersign_model="offline"))  # type: ignore[call-arg]
    priya = Caller(1, 1, Role.OWNER, "Priya Raman")
    for text in _TURNS:  # a real conversation to copy, and the warm-up of every code path
        await assistant.reply(conversation="template", caller=priya, text=text)
    template = await assistant.store.load("template")
    blob = ModelMessagesTypeAdapter.dump_json(template.messages).decode()
    async with db.session() as session, session.begin():  # stored in one go: only loading counts
        session.add_all(
            ConversationRow(
                key=f"c{i}", tenant_id=1, messages=blob, version=1, updated_at=datetime.now(UTC)
            )
            for i in range(count)
        )
    kept = []
    for i in range(count):
        kept.append(await assistant.store.load(f"c{i}"))
    await db.dispose()
    return kept


async def _cards(url: str, count: int) -> list[Any]:
    from bench.stage import CARD_SECRET, own_target
    from tools import Caller, CardSigner, Role
    from tools.db import Database
    from tools.toolsets.merchant import DEFAULT_AGENT, build_registry

    db = Database(url)
    registry = build_registry(db, CardSigner([CARD_SECRET]))
    arjun = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
    args = {"branch": 1, "sku": "FF-PANEER-WRAP", "delta": 1, "reason": "delivery counted"}
    for _ in range(count + 1):  # one more: the warm-up the empty baseline also does
        proposed = await registry.call(DEFAULT_AGENT, "adjust_stock", args, arjun)
        assert proposed.proposal is not None
        await own_target(db, proposed.proposal.card_id)
    await db.dispose()
    return []


async def _child(kind: str, count: int, url: str) -> None:
    from bench.stage import quiet_logs

    quiet_logs()
    work = _conversations if kind == "conversations" else _cards
    kept = await work(url, count)
    gc.collect()
    print(json.dumps({"rss_kib": _rss_kib(), "kept": len(kept)}))


async def _measure(kind: str, count: int, url: str) -> int:
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.memory", kind, str(count), url, stdout=PIPE, stderr=PIPE
    )
    async with asyncio.timeout(_LIMIT_S):
        out, err = await child.communicate()
    if child.returncode != 0:
        raise RuntimeError(f"the {kind} process failed: {err.decode()[-2000:]}")
    rss: int = json.loads(out)["rss_kib"]
    return rss


async def run(workdir: Path) -> list[Figure]:
    from bench.stage import sqlite_database

    template = Path((await sqlite_database(workdir, "memory.db")).split("///", 1)[1])
    figures = []
    for kind, (count, runs) in SIZES.items():
        figure = Figure(
            f"RSS, {count:,} {kind}",
            "MiB",
            "lower",
            digits=1,
            note="increase over an identical process that stored/proposed none",
        )
        for n in tqdm(range(runs), desc=f"memory {kind}", unit="run", leave=False):
            urls = []
            for role in ("full", "empty"):
                copy = workdir / f"memory-{kind}-{n}-{role}.db"
                shutil.copyfile(template, copy)
                urls.append(f"sqlite+aiosqlite:///{copy}")
            full, empty = await asyncio.gather(
                _measure(kind, count, urls[0]), _measure(kind, 0, urls[1])
            )
            figure.add((full - empty) / 1024)
            figure.baseline.append(empty / 1024)
        figure.note += f"; the empty process itself: {figure.baseline_summary()} MiB"
        figure.baseline = []
        figures.append(figure)
    return figures


if __name__ == "__main__":
    asyncio.run(_child(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
