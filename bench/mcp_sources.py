"""A merchant's MCP server behind Countersign, against a bare MCP client of the same server.

The server is the demo supplier ledger (``ledger``) over streamable HTTP on loopback, one
process for both sides. Each run times the product and its baseline in turn, on the same server:

- **read**: ``Registry.call`` of ``ledger__supplier_balance`` (the catalogue lookup, the schema,
  the call over Countersign's held connection, the rows for the model, the audit line) against
  the same ``tools/call`` from a bare ``mcp.Client`` plus one audit line written on its own.
  The goal is at most 1.3× that.
- **approval cycle**: ``Registry.call`` of ``ledger__record_payment`` (a card: resolved with the
  server's preview, sealed, stored, audited) and ``Registry.approve`` of it against one bare
  ``tools/call`` of the same write.
- **approval**: ``Registry.approve`` alone (verified, claimed, audited "executing", the preview
  asked again and compared, sent with its idempotency key, moved to done, audited) against one
  bare ``tools/call``. The goal is at most 2×: the server is asked twice, preview and call.
- **press beside a slow write**: Arjun's Approve on a card of the reference toolset while
  Priya's approved write waits 10 s on the hostile test server's ``slow_transfer``, against
  the same press with nothing running. The merchant's name is let go cold first, as it is
  after a quiet minute: the write used to hold SQLite's write lock from that read to its end.
  The goal is at most 1.5×.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mcp import Client

from bench.stage import CARD_SECRET, sqlite_database
from bench.stats import Figure
from tests.support.clock import SteppedClock
from tests.support.mcp_servers import HostileState, hostile_command, ledger_command, serving_http
from tools import Caller, CardSigner, Registry, Role
from tools.audit.log import AuditEntry, AuditLog
from tools.db import Database
from tools.toolsets.mcp import McpTools, SourceClients, SourceConfig, Sources
from tools.toolsets.merchant import build_registry

__all__ = ["run"]

RUNS = 5
CALLS = 40
CYCLES = 20
PRIYA = Caller(1, 1, Role.OWNER, "Priya Raman")
ARJUN = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
SLOW_RUNS = 3
SLOW_SECONDS = 10.0
# One live card per target: each press of a round adjusts another product.
SKUS = ("FF-PANEER-WRAP", "FF-MASALA-DOSA", "FF-FILTER-COFFEE", "FF-MANGO-LASSI", "FF-VEG-BIRYANI")
BALANCE = {"supplier_id": "SUP-001"}


async def run(workdir: Path) -> list[Figure]:
    read = Figure("MCP read via Countersign", "ms/call", "lower", target_ratio=1.3)
    read.note = (
        "Registry.call of the ledger's supplier_balance vs the same tools/call from a bare "
        "mcp.Client plus one audit line; streamable HTTP on loopback, SQLite"
    )
    cycle = Figure("MCP write: approval cycle", "ms/cycle", "lower")
    cycle.note = (
        "propose (with the server's preview) + approve (as-shown preview and keyed "
        "tools/call) vs one bare tools/call of record_payment"
    )
    approval = Figure("MCP write: approval", "ms/approval", "lower", target_ratio=2.0)
    approval.note = (
        "Registry.approve of a record_payment card (preview asked again, keyed tools/call, "
        "claim and outcome committed) vs one bare tools/call of record_payment"
    )
    url = await sqlite_database(workdir, "mcp.db")
    db = Database(url)
    registry = build_registry(db, CardSigner([CARD_SECRET]))
    registry.add_source(McpTools(db, SourceClients()))
    audit = AuditLog(db)
    with serving_http(ledger_command(workdir / "ledger.db"), log=workdir / "ledger.log") as mcp:
        await Sources(db).put(1, _source(mcp))
        try:
            async with Client(mcp) as bare:
                await _warm(registry, bare)
                for run_no in range(RUNS):
                    read.add(
                        await _timed(CALLS, lambda: _read(registry)),
                        await _timed(CALLS, lambda: _bare_read(bare, audit)),
                    )
                    cycle.add(
                        await _timed(CYCLES, lambda n=run_no: _cycle(registry, n)),
                        await _timed(CYCLES, lambda n=run_no: _bare_write(bare, n)),
                    )
                    approval.add(
                        await _approvals(registry, run_no),
                        await _timed(CYCLES, lambda n=run_no: _bare_write(bare, n)),
                    )
        finally:
            await registry.aclose()
            await db.dispose()
    return [read, cycle, approval, await _beside_slow_write(workdir)]


def _source(url: str) -> SourceConfig:
    return SourceConfig.model_validate(
        {
            "name": "ledger",
            "url": url,
            "trust_annotations": True,
            "rules": {
                "record_payment": {
                    "amount": "amount",
                    "preview": {"kind": "tool", "name": "preview_payment"},
                }
            },
        }
    )


_serial = 0


def _payment(prefix: str, run_no: int) -> dict[str, Any]:
    global _serial  # noqa: PLW0603 - one counter for every payment this process sends
    _serial += 1
    return {"supplier_id": "SUP-002", "amount": 1, "reference": f"{prefix}-{run_no}-{_serial}"}


async def _warm(registry: Any, bare: Client) -> None:
    """Connects both sides and fills every cache once, outside the timings."""
    await _read(registry)
    await _bare_read(bare, None)
    await _cycle(registry, -1)
    await _bare_write(bare, -1)


async def _read(registry: Any) -> None:
    result = await registry.call(registry.default_agent, "ledger__supplier_balance", BALANCE, PRIYA)
    assert result.rows, result


async def _bare_read(bare: Client, audit: AuditLog | None) -> None:
    answer = await bare.call_tool("supplier_balance", BALANCE)
    assert not answer.is_error
    if audit is not None:
        await audit.write(
            AuditEntry(
                at=datetime.now(UTC),
                agent="bench",
                tool="supplier_balance",
                userid=PRIYA.userid,
                tenantid=PRIYA.tenantid,
                scope="read",
                args=BALANCE,
            )
        )


async def _cycle(registry: Any, run_no: int) -> None:
    args = _payment("cycle", run_no)
    proposal = (
        await registry.call(registry.default_agent, "ledger__record_payment", args, PRIYA)
    ).proposal
    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)
    assert decision.ok, decision.card.outcome


async def _bare_write(bare: Client, run_no: int) -> None:
    answer = await bare.call_tool("record_payment", _payment("bare", run_no))
    assert not answer.is_error


async def _timed(times: int, once: Callable[[], Awaitable[None]]) -> float:
    """Milliseconds per call, over ``times`` calls in a row."""
    started = time.perf_counter()
    for _ in range(times):
        await once()
    return (time.perf_counter() - started) * 1000 / times


async def _approvals(registry: Any, run_no: int) -> float:
    """Milliseconds per ``Registry.approve`` of a payment card, each proposed just before (a
    card proposed earlier would show a balance another payment has moved since)."""
    took = 0.0
    for _ in range(CYCLES):
        args = _payment("approval", run_no)
        result = await registry.call(registry.default_agent, "ledger__record_payment", args, PRIYA)
        started = time.perf_counter()
        decision = await registry.approve(registry.default_agent, result.proposal.card, PRIYA)
        took += time.perf_counter() - started
        assert decision.ok, decision.card.outcome
    return took * 1000 / CYCLES


async def _beside_slow_write(workdir: Path) -> Figure:
    """Arjun's press while Priya's MCP write waits on its server, against his press alone."""
    figure = Figure("Press beside a 10 s MCP write", "ms/press", "lower", target_ratio=1.5)
    figure.note = (
        f"Registry.approve of an adjust_stock card while an approved slow_transfer waits "
        f"{SLOW_SECONDS:g} s on its server (the merchant's name cold) vs the same press with "
        "nothing running; SQLite, streamable HTTP on loopback"
    )
    url = await sqlite_database(workdir, "mcp-slow.db")
    db, clock = Database(url), SteppedClock()
    registry = build_registry(db, CardSigner([CARD_SECRET], clock=clock), clock=clock)
    registry.add_source(McpTools(db, SourceClients()))
    state = HostileState(workdir / "hostile")
    with serving_http(hostile_command(state.path), log=workdir / "hostile.log") as mcp:
        await Sources(db).put(1, SourceConfig(name="odd", url=mcp, trust_annotations=True))
        try:
            await _presses(registry)  # warm: the tools, the connection, the caches
            for _ in range(SLOW_RUNS):
                alone = await _presses(registry)
                figure.add(await _press_beside(registry, clock, state), alone)
        finally:
            await registry.aclose()
            await db.dispose()
    return figure


async def _press_beside(registry: Registry, clock: SteppedClock, state: HostileState) -> float:
    """Arjun's presses on cards proposed beforehand, made while Priya's write is with its
    server; their mean, so one press that waits for the write counts as it should."""
    args = {"to": "ACC-BENCH", "amount": 1, "seconds": SLOW_SECONDS}
    slow = (await registry.call(registry.default_agent, "odd__slow_transfer", args, PRIYA)).proposal
    assert slow is not None
    arjuns = [await _card(registry, sku) for sku in SKUS]
    sent = len(state.calls("slow_transfer"))
    clock.step(timedelta(minutes=2))  # the merchant's name is read again, as after a quiet minute
    writing = asyncio.create_task(registry.approve(registry.default_agent, slow.card, PRIYA))
    # The server's call log is a file another process writes: polled, there is no event.
    while len(state.calls("slow_transfer")) == sent:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    took = [await _approved(registry, token) for token in arjuns]
    assert (await writing).ok
    return sum(took) / len(took)


async def _presses(registry: Registry) -> float:
    """The mean of as many presses with nothing running, on cards proposed beforehand."""
    arjuns = [await _card(registry, sku) for sku in SKUS]
    took = [await _approved(registry, token) for token in arjuns]
    return sum(took) / len(took)


async def _card(registry: Registry, sku: str) -> str:
    args = {"branch": 1, "sku": sku, "delta": 1, "reason": "delivery counted"}
    result = await registry.call(registry.default_agent, "adjust_stock", args, ARJUN)
    assert result.proposal is not None
    return result.proposal.card


async def _approved(registry: Registry, token: str) -> float:
    started = time.perf_counter()
    decision = await registry.approve(registry.default_agent, token, ARJUN)
    assert decision.ok, decision.card.outcome
    return (time.perf_counter() - started) * 1000
