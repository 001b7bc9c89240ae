"""npm's reference filesystem server starts offline from the project's lock file, and its dry run writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import TextContent

# Each file on one xdist worker, so its module-scoped servers start once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("mcp-filesystem")]


async def test_edit_file_with_dry_run_returns_a_diff_and_leaves_the_file(
    filesystem_stdio: list[str], filesystem_root: Path
) -> None:
    """The server lists annotated tools; edit_file with dryRun true answers a diff and writes nothing."""
    note = filesystem_root / "note.txt"
    note.write_text("Pay Nandi Dairy ₹7,800\n", encoding="utf-8")
    server = StdioServerParameters(command=filesystem_stdio[0], args=filesystem_stdio[1:])
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        preview = await client.call_tool(
            "edit_file",
            {
                "path": str(note),
                "edits": [{"oldText": "₹7,800", "newText": "₹7,800.50"}],
                "dryRun": True,
            },
        )
    edit = tools["edit_file"].annotations
    assert edit is not None and edit.read_only_hint is False and edit.destructive_hint is True
    read = tools["read_text_file"].annotations
    assert read is not None and read.read_only_hint is True
    assert not preview.is_error
    diff = preview.content[0]
    assert isinstance(diff, TextContent)
    assert "-Pay Nandi Dairy ₹7,800\n+Pay Nandi Dairy ₹7,800.50" in diff.text
    assert note.read_text(encoding="utf-8") == "Pay Nandi Dairy ₹7,800\n"
