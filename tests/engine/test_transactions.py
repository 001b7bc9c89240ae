"""How a cycle meets the database: one transaction to propose, two to approve, in that order."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from tests.engine.conftest import ARJUN, EVERYTHING
from tools import Registry

RENAME = {"branch_id": 1, "name": "Indiranagar East"}


@contextmanager
def _transactions(registry: Registry) -> Iterator[list[list[str]]]:
    """Every statement sent to the driver, grouped by the transaction that committed it."""
    done: list[list[str]] = []
    current: list[str] = []

    def statement(*args: Any) -> None:
        sql = " ".join(args[2].split()[:3])
        if not sql.startswith("BEGIN"):
            current.append(sql)

    def end(kind: str) -> Any:
        def close(conn: Any) -> None:
            done.append([*current, kind])
            current.clear()

        return close

    engine = registry.db.engine.sync_engine
    listeners = [
        ("before_cursor_execute", statement),
        ("commit", end("COMMIT")),
        ("rollback", end("ROLLBACK")),
    ]
    for name, fn in listeners:
        event.listen(engine, name, fn)
    try:
        yield done
    finally:
        for name, fn in listeners:
            event.remove(engine, name, fn)


async def test_propose_is_one_transaction_with_its_audit_line(registry: Registry) -> None:
    """The card and its 'proposed' audit line are stored by one commit, after the tool's reads."""
    with _transactions(registry) as done:
        await registry.call(EVERYTHING, "rename_branch", RENAME, ARJUN)

    [proposed] = done
    assert proposed[-3:] == ["INSERT INTO proposals", "INSERT INTO audit_log", "COMMIT"]


async def test_approve_commits_the_claim_and_its_audit_before_the_write(
    registry: Registry,
) -> None:
    """Two transactions: the claim with 'approved / executing', committed; then the write, the
    card's move to done and the outcome's audit line, committed together."""
    proposal = (await registry.call(EVERYTHING, "rename_branch", RENAME, ARJUN)).proposal
    assert proposal is not None

    with _transactions(registry) as done:
        assert (await registry.approve(EVERYTHING, proposal.card, ARJUN)).ok

    claim, write = done
    assert claim == [
        "SELECT proposals.id, proposals.tool,",
        "UPDATE proposals SET",
        "INSERT INTO audit_log",
        "COMMIT",
    ]
    assert "UPDATE branches SET" in write
    assert write.index("UPDATE branches SET") < write.index("UPDATE proposals SET")
    assert write[-2:] == ["INSERT INTO audit_log", "COMMIT"]
