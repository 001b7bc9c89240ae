"""Read tools over a merchant's data (placeholder until the read tools land)."""

from __future__ import annotations

from tools.tool import Tool

__all__ = ["READ_TOOLS"]

READ_TOOLS: list[Tool] = []
