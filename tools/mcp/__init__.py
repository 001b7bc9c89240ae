"""The merchants' own systems behind the card: MCP servers as a source of tools.

A merchant connects its servers (``countersign mcp add``); their tools join that merchant's
catalogue and no other's. Reads call the server; writes are Countersign write tools whose
``execute`` alone sends ``tools/call``, once, with the card id as the idempotency key
(``IDEMPOTENCY_KEY``). Nothing here knows Slack, Teams or a model.
"""

from __future__ import annotations

from tools.mcp.building import sentence_problem
from tools.mcp.config import IDEMPOTENCY_KEY, Preview, SourceConfig, ToolRule
from tools.mcp.connection import SourceClients
from tools.mcp.news import NewTools
from tools.mcp.provider import Listed, McpTools, Reviewed
from tools.mcp.sealing import Sealed, SecretBox
from tools.mcp.store import Source, Sources

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
