"""A merchant's MCP tools the owner has not reviewed are writes: new ones, and writes the server
later marks read-only; the owner is told of them once."""

from __future__ import annotations

import pytest

from tests.engine.conftest import PRIYA
from tests.mcp.conftest import connect
from tests.support.mcp_servers import HostileState
from tools import Registry
from tools.db import Database
from tools.tool import Scope
from tools.toolsets.mcp import McpTools, NewTools, SourceClients, Sources

pytestmark = pytest.mark.slow


async def _offered(registry: Registry, tenantid: int) -> dict[str, Scope]:
    """What a turn offers, once the source has listed its tools: a stdio server starting on a
    busy machine may miss a turn's few seconds, and that turn offers none of its tools."""
    for _ in range(10):
        found = await registry.offered(registry.default_agent, tenantid)
        if any(t.name.startswith("odd__") for t in found):
            break
    return {t.name: t.scope for t in found}


async def test_a_tool_that_appears_on_a_trusted_server_is_a_card_and_is_not_run(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A tool a trusted server lists after it was connected, marked readOnlyHint, proposes a
    card and the server hears nothing: it used to run at once, as a read nobody had seen."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    assert (await _offered(registry, 1))["odd__lookup_order"] is Scope.READ
    hostile_state.show_appearing(True)
    try:
        assert (await _offered(registry, 1))["odd__appearing_lookup"] is Scope.WRITE
        called = await registry.call(
            registry.default_agent, "odd__appearing_lookup", {"order_id": "A-1"}, PRIYA
        )
    finally:
        hostile_state.show_appearing(False)

    assert called.proposal is not None
    assert called.proposal.summary == "Look up a late order on the odd server."
    assert not hostile_state.calls("appearing_lookup")


async def test_a_write_marked_read_only_later_stays_a_write_until_reviewed(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """set_flag, a write when connected, claims readOnlyHint later: still a card, nothing sent;
    once the owner reviews the source it is a read."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    assert (await _offered(registry, 1))["odd__set_flag"] is Scope.WRITE
    before = len(hostile_state.calls("set_flag"))
    hostile_state.claim_read_only(True)
    try:
        assert (await _offered(registry, 1))["odd__set_flag"] is Scope.WRITE
        args = {"name": "vip", "value": True}
        called = await registry.call(registry.default_agent, "odd__set_flag", args, PRIYA)
        assert called.proposal is not None
        assert len(hostile_state.calls("set_flag")) == before

        await Sources(db).review(1, "odd", {"set_flag": Scope.READ})

        assert (await _offered(registry, 1))["odd__set_flag"] is Scope.READ
    finally:
        hostile_state.claim_read_only(False)


async def test_a_read_marked_a_write_later_is_a_write_at_once(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A tool accepted as a read that the server stops calling read-only is a write on the next
    turn, with no review."""
    hostile_state.claim_read_only(True)
    try:
        await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
        assert (await _offered(registry, 1))["odd__set_flag"] is Scope.READ
    finally:
        hostile_state.claim_read_only(False)

    assert (await _offered(registry, 1))["odd__set_flag"] is Scope.WRITE


async def test_the_owner_is_told_of_unreviewed_tools_once(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """Tools that appeared are handed out once, with what the server marks each as, and a
    second process asking finds them already told."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    await _offered(registry, 1)
    one, other = McpTools(db, SourceClients(list_ttl=0)), McpTools(db, SourceClients(list_ttl=0))
    hostile_state.show_appearing(True)
    try:
        for _ in range(10):  # until the new process has listed the server (it may start slowly)
            news = await one.untold(1)
            if news:
                break
        assert await one.untold(1) == []
        assert "odd__appearing_lookup" in {t.shown_as for t in await other.listed(1)}
        assert await other.untold(1) == []
    finally:
        hostile_state.show_appearing(False)
        await one.aclose()
        await other.aclose()

    assert news == [
        NewTools("odd", {"appearing_lookup": Scope.READ, "appearing_tool": Scope.WRITE})
    ]
