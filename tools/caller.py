"""Who is asking: the person behind a tool call, resolved by a surface; never chosen by the model."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Caller", "Role"]


class Role(StrEnum):
    """A person's role in their merchant; each role includes the ones below it."""

    STAFF = "staff"
    MANAGER = "manager"
    OWNER = "owner"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def satisfies(self, needed: Role) -> bool:
        """True when this role is at least ``needed``."""
        return self.rank >= needed.rank


_RANKS = {Role.STAFF: 0, Role.MANAGER: 1, Role.OWNER: 2}


@dataclass(frozen=True, slots=True)
class Caller:
    """A person in one tenant, as a surface resolved them from a chat identity."""

    userid: int
    tenantid: int
    role: Role
    name: str = ""
