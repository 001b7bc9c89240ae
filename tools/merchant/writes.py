"""Write tools over a merchant's data (placeholder until the write tools land)."""

from __future__ import annotations

from tools.tool import Tool

__all__ = ["WRITE_TOOLS"]

WRITE_TOOLS: list[Tool] = []
