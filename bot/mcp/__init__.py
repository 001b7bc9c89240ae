"""The MCP server surface: agents elsewhere reach a merchant's tools at ``/mcp``; writes are cards.

Inbound only, beside Slack and Teams: ``bot.mcp.serving`` answers the protocol, and
``bot.mcp.delivery`` takes each card to the people it is issued to.
"""

from __future__ import annotations

from bot.mcp.serving import McpEndpoint

__all__ = ["McpEndpoint"]
