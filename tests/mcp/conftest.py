"""A registry with the merchants' MCP sources, over real servers (tests/support/mcp_servers.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from tests.engine.conftest import SECRET
from tests.support.clock import SteppedClock
from tools import Registry
from tools.cards.tokens import CardSigner
from tools.db import Database
from tools.toolsets.mcp import McpTools, SourceClients, SourceConfig, Sources
from tools.toolsets.merchant import build_registry


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    """SQLite only, as a rule, here: what these tests pin is the talk with the servers; the
    cards' database side runs on both engines in ``test_on_both`` and in tests/engine."""
    return str(request.param)


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


@pytest.fixture
async def registry(db: Database, clock: SteppedClock) -> AsyncIterator[Registry]:
    """Every merchant tool plus the merchants' MCP sources, tool lists never reused."""
    signer = CardSigner([SECRET], ttl=timedelta(minutes=30), clock=clock)
    registry = build_registry(db, signer, clock=clock)
    registry.add_source(McpTools(db, SourceClients(list_ttl=0), sources_ttl=0))
    try:
        yield registry
    finally:
        await registry.aclose()


async def connect(
    db: Database, tenantid: int, name: str, command: list[str], **rules: object
) -> SourceConfig:
    """Stores a stdio source ``name`` for ``tenantid`` running ``command``."""
    config = SourceConfig.model_validate(
        {"name": name, "command": command[0], "args": command[1:], **rules}
    )
    await Sources(db).put(tenantid, config)
    return config


async def connect_url(
    db: Database, tenantid: int, name: str, url: str, **rules: object
) -> SourceConfig:
    config = SourceConfig.model_validate({"name": name, "url": url, **rules})
    await Sources(db).put(tenantid, config)
    return config


async def offered_soon(registry: Registry, tenantid: int, name: str) -> None:
    """Waits until the tool ``name`` is offered to ``tenantid``'s turns.

    A turn waits only seconds for a server that is starting, and a busy machine takes longer
    to start one: a test that means the tool to be there waits for it first.
    """
    for _ in range(300):
        offered = await registry.offered(registry.default_agent, tenantid)
        if any(tool.name == name for tool in offered):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{name} was never offered")
