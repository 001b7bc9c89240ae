"""A clock tests step by hand, to move cards past their time to live without waiting."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

__all__ = ["SteppedClock"]


@dataclass
class SteppedClock:
    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __call__(self) -> datetime:
        return self.now

    def step(self, delta: timedelta) -> None:
        self.now += delta
