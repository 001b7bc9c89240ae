"""Connections: which merchant an installation belongs to, set only explicitly, on both databases."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from tests.support.clock import SteppedClock
from tools.db import Database
from tools.errors import ConflictError, NotFoundError
from tools.people.connections import Connections, Platform

FIESTA, HARBOR = 1, 2


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


@pytest.fixture
def connections(db: Database, clock: SteppedClock) -> Connections:
    return Connections(db, clock=clock)


async def test_an_installation_nobody_connected_belongs_to_no_merchant(
    connections: Connections,
) -> None:
    """Without a connection there is no merchant: not from an email, not from anything else."""
    assert await connections.tenant_of("slack", "T0FOREIGN") is None
    listed = {c.installation for c in await connections.listing()}
    assert "T0FOREIGN" not in listed


async def test_connect_is_idempotent_and_disconnect_cuts_it(connections: Connections) -> None:
    """Connecting twice keeps one connection; disconnecting leaves the installation unowned."""
    first = await connections.connect(Platform.SLACK, "T0SHOP", FIESTA)
    again = await connections.connect(Platform.SLACK, " T0SHOP ", FIESTA)
    assert (first.tenantid, again.tenantid) == (FIESTA, FIESTA)
    assert await connections.tenant_of("slack", "T0SHOP") == FIESTA
    assert await connections.tenant_of("teams", "T0SHOP") is None
    assert [c.installation for c in await connections.listing()].count("T0SHOP") == 1
    await connections.disconnect(Platform.SLACK, "T0SHOP")
    assert await connections.tenant_of("slack", "T0SHOP") is None
    with pytest.raises(NotFoundError, match="not connected"):
        await connections.disconnect(Platform.SLACK, "T0SHOP")


async def test_an_installation_cannot_be_taken_by_a_second_merchant(
    connections: Connections,
) -> None:
    """Connecting another merchant's workspace is refused with the command that frees it."""
    await connections.connect(Platform.TEAMS, "tenant-guid", FIESTA)
    with pytest.raises(ConflictError, match="countersign disconnect teams tenant-guid"):
        await connections.connect(Platform.TEAMS, "tenant-guid", HARBOR)
    assert await connections.tenant_of("teams", "tenant-guid") == FIESTA


async def test_an_install_code_connects_once(connections: Connections) -> None:
    """A code connects the installation that redeems it, and never a second one."""
    code = await connections.invite(HARBOR)
    made = await connections.redeem(code, Platform.SLACK, "T0BOOKS")
    assert made.tenantid == HARBOR
    with pytest.raises(NotFoundError, match="already used"):
        await connections.redeem(code, Platform.SLACK, "T0OTHER")
    assert await connections.tenant_of("slack", "T0OTHER") is None


async def test_an_install_code_expires(connections: Connections, clock: SteppedClock) -> None:
    """A code past its time connects nothing."""
    code = await connections.invite(HARBOR, ttl=timedelta(hours=1))
    clock.step(timedelta(hours=2))
    with pytest.raises(NotFoundError, match="expired"):
        await connections.redeem(code, Platform.SLACK, "T0BOOKS")
    assert await connections.tenant_of("slack", "T0BOOKS") is None


async def test_a_guessed_code_connects_nothing(connections: Connections) -> None:
    """Only a code that was handed out works; the table stores no usable code."""
    await connections.invite(HARBOR)
    with pytest.raises(NotFoundError):
        await connections.redeem("not-a-code", Platform.SLACK, "T0BOOKS")


async def test_a_code_cannot_move_a_connected_workspace(connections: Connections) -> None:
    """Redeeming a code from a workspace another merchant owns is refused and spends nothing."""
    await connections.connect(Platform.SLACK, "T0SHOP", FIESTA)
    code = await connections.invite(HARBOR)
    with pytest.raises(ConflictError):
        await connections.redeem(code, Platform.SLACK, "T0SHOP")
    assert (await connections.redeem(code, Platform.SLACK, "T0BOOKS")).tenantid == HARBOR


async def test_two_installs_racing_with_one_code_connect_one(connections: Connections) -> None:
    """One code redeemed by two installations at once connects exactly one of them."""
    code = await connections.invite(HARBOR)
    results = await asyncio.gather(
        connections.redeem(code, Platform.SLACK, "T0ONE"),
        connections.redeem(code, Platform.SLACK, "T0TWO"),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(isinstance(r, NotFoundError) for r in results if isinstance(r, BaseException))
    listed = {c.installation for c in await connections.listing()}
    assert len(listed & {"T0ONE", "T0TWO"}) == 1


async def test_an_installation_keeps_its_audit_channel(connections: Connections) -> None:
    """The audit channel is set per connected installation and cleared with None."""
    with pytest.raises(NotFoundError):
        await connections.set_audit_channel(Platform.SLACK, "T0SHOP", "C0AUDIT")
    await connections.connect(Platform.SLACK, "T0SHOP", FIESTA)
    await connections.set_audit_channel(Platform.SLACK, "T0SHOP", "C0AUDIT")
    found = await connections.connection("slack", "T0SHOP")
    assert found is not None and found.audit_channel == "C0AUDIT"
    await connections.set_audit_channel(Platform.SLACK, "T0SHOP", None)
    cleared = await connections.connection("slack", "T0SHOP")
    assert cleared is not None and cleared.audit_channel is None


async def test_demo_connects_the_sandbox_workspaces_even_on_an_older_database(
    connections: Connections, db: Database
) -> None:
    """The demo's workspaces are connected to their merchants, and `demo` on a database loaded
    before connections existed connects them, so the sandbox keeps working."""
    from tools.toolsets.merchant.demo import DEMO_WORKSPACES, load_demo

    for team, tenant in DEMO_WORKSPACES:
        assert await connections.tenant_of("slack", team) == tenant
        await connections.disconnect(Platform.SLACK, team)
    summary = await load_demo(db)
    assert not summary.loaded
    for team, tenant in DEMO_WORKSPACES:
        assert await connections.tenant_of("slack", team) == tenant


def test_the_sandbox_names_the_demos_workspaces() -> None:
    """The sandbox (which imports nothing of the engine) uses the ids the demo connects."""
    from bot.sandbox.people import FIESTA_TEAM, HARBOR_TEAM
    from tools.toolsets.merchant.demo import DEMO_WORKSPACES, FIESTA, HARBOR

    assert dict(DEMO_WORKSPACES) == {FIESTA_TEAM: FIESTA, HARBOR_TEAM: HARBOR}
