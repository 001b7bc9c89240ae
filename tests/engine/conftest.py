"""A registry over the toy tools, a clock the tests can step, and the demo people as callers."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.engine.toy import TOY_TOOLS
from tests.support.clock import SteppedClock
from tools import Agent, Caller, CardSigner, ProcessLease, Registry, Role
from tools.db import Database
from tools.toolsets.merchant.scope import tenant_name

SECRET = "engine-test-secret-0123456789"


PRIYA = Caller(1, 1, Role.OWNER, "Priya Raman")
ARJUN = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
MEERA = Caller(3, 1, Role.MANAGER, "Meera Iyer")
RAVI = Caller(4, 1, Role.STAFF, "Ravi Kumar")
SAM = Caller(5, 2, Role.OWNER, "Sam Lee")
EVERYTHING = Agent("test")


@pytest.fixture
def clock() -> SteppedClock:
    return SteppedClock()


@pytest.fixture
def signer(clock: SteppedClock) -> CardSigner:
    return CardSigner([SECRET], ttl=timedelta(minutes=30), clock=clock)


@pytest.fixture
def lease(db: Database, clock: SteppedClock) -> ProcessLease:
    """This process's lease, the one the registry claims cards under."""
    return ProcessLease(db, clock=clock)


@pytest.fixture
def registry(
    db: Database, clock: SteppedClock, signer: CardSigner, lease: ProcessLease
) -> Registry:
    return Registry(db, signer, TOY_TOOLS, clock=clock, tenant_names=tenant_name, lease=lease)
