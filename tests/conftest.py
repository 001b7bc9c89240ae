"""Fixtures every test shares: a real database per test, on SQLite and on PostgreSQL."""

from __future__ import annotations

import gc
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from pydantic_ai import models

from tests.support.databases import Templates, build_templates
from tests.support.postgres import PostgresCluster
from tools.db import Database
from tools.toolsets.mcp import provider

# The MCP servers' fixtures (the ledger, the hostile server, npm's filesystem server).
pytest_plugins = ["tests.support.mcp_servers"]

# No test ever talks to a real model provider.
models.ALLOW_MODEL_REQUESTS = False

BACKENDS = ["sqlite", "postgresql"]
MEMORY = Path("/dev/shm")


def pytest_configure(config: pytest.Config) -> None:
    """Puts the run's temporary files in memory (/dev/shm) when TMPDIR does not say where.

    Every test copies a database there, and every PostgreSQL test clones one in the cluster
    kept there and drops it. On this disk (ext4 mounted with `discard`) a clone and drop of the
    template's ~900 files cost the kernel 0.26 s, against 0.015 s in memory, and SQLite's and
    the servers' syncs waited on the disk. Set here, before xdist starts its workers, it holds
    for them and for every process a test starts.
    """
    if "TMPDIR" in os.environ or not (MEMORY.is_dir() and os.access(MEMORY, os.W_OK)):
        return
    os.environ["TMPDIR"] = str(MEMORY)
    tempfile.tempdir = str(MEMORY)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Runs the files holding slow tests (real processes, a browser) first, each file whole.

    With two xdist workers the run lasts as long as the busier one: a minute-long test that
    came up last kept one worker going while the other had nothing left. A file is kept in
    one piece so its module-scoped fixtures are set up once.
    """
    slow_files = {item.path for item in items if _slow(item)}
    items.sort(key=lambda item: item.path not in slow_files)


def pytest_unconfigure(config: pytest.Config) -> None:
    # As `countersign` does at exit (bot.cli.run): Python's last collection over everything a
    # worker imported and kept took seconds per process, after the last test had passed.
    gc.freeze()


def _slow(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(name) is not None for name in ("slow", "browser"))


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def templates(postgres: PostgresCluster, tmp_path_factory: pytest.TempPathFactory) -> Templates:
    return build_templates(tmp_path_factory.mktemp("templates"), postgres)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def database_url(backend: str, templates: Templates, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh, migrated database holding the demo data, private to this test."""
    if backend == "sqlite":
        yield templates.sqlite_copy(tmp_path)
        return
    url = await templates.postgres_copy()
    try:
        yield url
    finally:
        await templates.postgres_drop(url)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    try:
        yield database
    finally:
        await database.dispose()


@pytest.fixture(autouse=True)
def patient_turns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn waits for an MCP server's first listing however long a loaded machine takes to
    start it: at a load of 6 on two cores a stdio server took 6 s against a turn's 3 s, and
    tests that pin cards and calls failed on "There is no tool called odd__…"."""
    monkeypatch.setattr(provider, "TURN_BUDGET", 60.0)
