"""Smoke: the database fixture works on both engines."""

from __future__ import annotations

from tests.engine.conftest import ARJUN, EVERYTHING
from tools import Registry


async def test_read_runs_on_both_databases(registry: Registry) -> None:
    """A read tool returns the tenant's branch count."""
    result = await registry.call(EVERYTHING, "count_branches", {}, ARJUN)
    assert result.rows == [{"branches": 4}]
