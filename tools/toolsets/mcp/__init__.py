"""The merchants' own systems behind the card: MCP servers as a source of tools.

A merchant connects its servers (``countersign mcp add``); their tools join that merchant's
catalogue and no other's. Reads call the server; writes are Countersign write tools whose
``execute`` alone sends ``tools/call``, once, with the card id as the idempotency key
(``IDEMPOTENCY_KEY``). Nothing here knows Slack, Teams or a model.
"""

from __future__ import annotations

from tools.toolsets.mcp.building import sentence_problem
from tools.toolsets.mcp.config import IDEMPOTENCY_KEY, Preview, SourceConfig, ToolRule
from tools.toolsets.mcp.connection import SourceClients
from tools.toolsets.mcp.news import NewTools
from tools.toolsets.mcp.provider import Listed, McpTools, Reviewed
from tools.toolsets.mcp.sealing import Sealed, SecretBox
from tools.toolsets.mcp.store import Source, Sources

__all__ = [
    "IDEMPOTENCY_KEY",
    "Listed",
    "McpTools",
    "NewTools",
    "Preview",
    "Reviewed",
    "Sealed",
    "SecretBox",
    "Source",
    "SourceClients",
    "SourceConfig",
    "Sources",
    "ToolRule",
    "sentence_problem",
]
