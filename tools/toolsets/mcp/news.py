"""Says which of a source's tools the owner has not reviewed yet, for telling them once; sends,
words and records nothing.

``tools.toolsets.mcp.provider.McpTools.untold`` finds them and records them as told
(``tools.toolsets.mcp.store.Sources.tell``); whoever gets them tells the owner (``bot.presses.news``: a
DM in Slack, a 1:1 chat in Teams, in each surface's words).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp.types import Tool as McpTool

from tools.tool import Scope
from tools.toolsets.mcp.building import annotated
from tools.toolsets.mcp.config import SourceConfig
from tools.toolsets.mcp.store import Accepted

__all__ = ["NewTools", "unreviewed"]


@dataclass(frozen=True, slots=True)
class NewTools:
    """Tools of one source the owner has not reviewed, with what the server marks each as."""

    source: str
    tools: dict[str, Scope]


def unreviewed(config: SourceConfig, tool: McpTool, accepted: Accepted) -> bool:
    """Whether the owner has yet to review ``tool``: new since they accepted the source's tools,
    or a write the server now marks read-only, with no ``--read`` / ``--write`` of theirs."""
    if config.rule(tool.name).scope is not None:
        return False
    said = accepted.get(tool.name)
    return said is None or (said is Scope.WRITE and annotated(tool) is Scope.READ)
