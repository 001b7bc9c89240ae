"""A stdio server that died while a card waited is started again before the next call, so Approve still runs."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.engine.conftest import PRIYA
from tests.mcp.conftest import offered_soon
from tests.support.mcp_servers import payments_with_key
from tools import Registry
from tools.cards.record import CardStatus
from tools.db import Database
from tools.tool import Proposal
from tools.toolsets.mcp import Sources
from tools.toolsets.mcp.connection import SourceClient
from tools.toolsets.mcp.demo import demo_ledger

pytestmark = pytest.mark.slow


def _children(marker: str) -> list[int]:
    """The pids of this process's children whose command line holds ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue  # a process that ended while it was read
        if parent == os.getpid() and marker in command:
            found.append(int(entry.name))
    return found


async def _kill(marker: str) -> None:
    """Kills the ledger child as an operator's `kill -9` would, and waits until it is gone."""
    pids = _children(marker)
    assert pids, f"no child process runs {marker}"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        if not _children(marker):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{marker} did not end")


async def _payment_card(registry: Registry, reference: str) -> Proposal:
    await offered_soon(registry, 1, "ledger__record_payment")
    args = {"supplier_id": "SUP-001", "amount": 10, "reference": reference}
    proposal = (
        await registry.call(registry.default_agent, "ledger__record_payment", args, PRIYA)
    ).proposal
    assert proposal is not None
    return proposal


async def test_a_killed_ledger_is_started_again_and_approve_gets_done(
    registry: Registry, db: Database, tmp_path: Path
) -> None:
    """The demo ledger's child killed while its payment card waits: Approve starts it again,
    re-reads the preview and records the payment once (it used to fail with "Connection
    closed while preparing the card")."""
    ledger_db = tmp_path / "ledger.db"
    await Sources(db).put(1, demo_ledger(ledger_db))
    proposal = await _payment_card(registry, "DEAD-1")
    await _kill(str(ledger_db))

    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)

    assert decision.card.status is CardStatus.DONE, decision.card.outcome
    assert payments_with_key(ledger_db, proposal.card_id) == 1


@pytest.mark.parametrize("call", ["read", "list"])
async def test_a_killed_server_is_started_again_before_a_read_or_a_listing(
    tmp_path: Path, call: str
) -> None:
    """A read or a tool listing after the server's process died is answered by a new one, not
    "Connection closed"."""
    ledger_db = tmp_path / "ledger.db"
    connection = SourceClient(demo_ledger(ledger_db), list_ttl=0)
    try:
        assert await connection.tools()
        await _kill(str(ledger_db))

        if call == "read":
            answer = await connection.read("list_suppliers", {})
            assert not answer.is_error
            assert "SUP-001" in str(answer.content)
        else:
            assert "record_payment" in {tool.name for tool in await connection.tools()}
    finally:
        await connection.aclose()


async def test_a_ledger_that_stays_down_fails_approve_in_plain_words(
    registry: Registry, db: Database, tmp_path: Path
) -> None:
    """A server that cannot be started again when Approve re-reads the preview: the failed card
    says in plain words that it is not answering, that nothing was sent and to ask again (it
    used to read "could not be reached (unhandled errors in a TaskGroup …)"); nothing is
    recorded."""
    ledger_db, up = tmp_path / "ledger.db", tmp_path / "up"
    up.touch()
    # The ledger behind a switch: with the file gone, starting it again fails.
    script = f'test -f "{up}" && exec "{sys.executable}" -m ledger --db "{ledger_db}"'
    config = demo_ledger(ledger_db).model_copy(update={"command": "sh", "args": ("-c", script)})
    await Sources(db).put(1, config)
    proposal = await _payment_card(registry, "DOWN-1")
    up.unlink()
    await _kill(str(ledger_db))

    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)

    assert decision.card.status is CardStatus.FAILED
    assert decision.card.outcome == (
        "The ledger server is not answering; nothing was sent. "
        "Ask for it again once the server is back."
    )
    assert payments_with_key(ledger_db, proposal.card_id) == 0
