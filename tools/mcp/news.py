"""Says which of a source's tools the owner has not reviewed yet, for telling them once; sends
nothing and records nothing.

``tools.mcp.provider.McpTools.untold`` finds them and records them as told
(``tools.mcp.store.Sources.tell``); whoever gets them tells the owner, a DM or a 1:1 chat with
``NewTools.message``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp.types import Tool as McpTool

from tools.mcp.building import annotated
from tools.mcp.config import SourceConfig
from tools.mcp.store import Accepted
from tools.tool import Scope

__all__ = ["NewTools", "unreviewed"]


@dataclass(frozen=True, slots=True)
class NewTools:
    """Tools of one source the owner has not reviewed, with what the server marks each as."""

    source: str
    tools: dict[str, Scope]

    def message(self, merchant: str) -> str:
        """What the owner is told, once: what appeared, what the server says it is, what to do."""
        each = "; ".join(
            f"{tool} (the server marks it {'read-only' if said is Scope.READ else 'a write'})"
            for tool, said in sorted(self.tools.items())
        )
        return (
            f"The {self.source} MCP server of {merchant} lists tools you have not reviewed: "
            f"{each}. Until you do, each is a write that runs only when someone approves its "
            f'card. Review them with: countersign mcp review "{merchant}" {self.source} (or '
            "--read TOOL / --write TOOL to say which yourself)."
        )


def unreviewed(config: SourceConfig, tool: McpTool, accepted: Accepted) -> bool:
    """Whether the owner has yet to review ``tool``: new since they accepted the source's tools,
    or a write the server now marks read-only, with no ``--read`` / ``--write`` of theirs."""
    if config.rule(tool.name).scope is not None:
        return False
    said = accepted.get(tool.name)
    return said is None or (said is Scope.WRITE and annotated(tool) is Scope.READ)
