"""Agents: a name and the tools it may reach. Checked on every call and again on every approval."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Agent"]


@dataclass(frozen=True, slots=True)
class Agent:
    """A named allow-list. ``tools=None`` allows every tool in the registry but ``excluded``."""

    name: str
    tools: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()

    @classmethod
    def only(cls, name: str, tools: Iterable[str]) -> Agent:
        return cls(name, frozenset(tools))

    def allows(self, tool: str) -> bool:
        return (self.tools is None or tool in self.tools) and tool not in self.excluded
