"""Fixtures of the fault and bad-input tests: a fake Slack workspace holding the demo people."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.sandbox import WebApi as FakeSlack
from tests.reliability.harness import workspace


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = await workspace()
    try:
        yield fake
    finally:
        await fake.stop()
