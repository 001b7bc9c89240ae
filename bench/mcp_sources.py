"""A merchant's MCP server behind Countersign, against a bare MCP client of the same server.

The server is the demo supplier ledger (``tools.ledger``) over streamable HTTP on loopback, one
process for both sides. Each run times the product and its baseline in turn, on the same server:

- **read**: ``Registry.call`` of ``ledger__supplier_balance`` (the catalogue lookup, the schema,
  the call over Countersign's held connection, the rows for the model, the audit line) against
  the same ``tools/call`` from a bare ``mcp.Client`` plus one audit line written on its own.
  The goal is at most 1.3× that.
- **approval cycle**: ``Registry.call`` of ``ledger__record_payment`` (a card: resolved with the
  server's preview, sealed, stored, audited) and ``Registry.approve`` of it (verified, claimed,
  audited "executing", the server asked whether it is there, re-read as shown, sent with its
  idempotency key, moved to done, audited) against one bare ``tools/call`` of the same write.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import Client

from bench.stage import CARD_SECRET, sqlite_database
from bench.stats import Figure
from tests.support.mcp_servers import ledger_command, serving_http
from tools import Caller, CardSigner, Role
from tools.audit import AuditEntry, AuditLog
from tools.db import Database
from tools.mcp import Connections, McpTools, SourceConfig, Sources
from tools.merchant import build_registry

__all__ = ["run"]

RUNS = 5
CALLS = 40
CYCLES = 20
PRIYA = Caller(1, 1, Role.OWNER, "Priya Raman")
BALANCE = {"supplier_id": "SUP-001"}


async def run(workdir: Path) -> list[Figure]:
    read = Figure("MCP read via Countersign", "ms/call", "lower", target_ratio=1.3)
    read.note = (
        "Registry.call of the ledger's supplier_balance vs the same tools/call from a bare "
        "mcp.Client plus one audit line; streamable HTTP on loopback, SQLite"
    )
    cycle = Figure("MCP write: approval cycle", "ms/cycle", "lower")
    cycle.note = (
        "propose (with the server's preview) + approve (with its probe, as-shown re-read and "
        "keyed tools/call) vs one bare tools/call of record_payment"
    )
    url = await sqlite_database(workdir, "mcp.db")
    db = Database(url)
    registry = build_registry(db, CardSigner([CARD_SECRET]))
    registry.add_source(McpTools(db, Connections()))
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
        finally:
            await registry.aclose()
            await db.dispose()
    return [read, cycle]


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
