"""A large MCP answer reaches the model as its beginning and a marker of how much was left out, never as nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.engine.conftest import PRIYA
from tests.mcp.conftest import connect, offered_soon
from tools import Registry
from tools.db import AuditRow, Database

pytestmark = pytest.mark.slow

# A server whose answers are large in each of the shapes MCP has: a string (structured content
# {"result": …}), a document (structured content {"content": …, "title": …}) and an embedded
# text resource.
_SERVER = '''
from mcp.server.mcpserver import MCPServer
from mcp.types import EmbeddedResource, TextResourceContents

server = MCPServer("reports")


def _text(chars: int) -> str:
    return "".join(f"line {n:07d}\\n" for n in range(chars // 13 + 1))[:chars]


@server.tool()
def big_string(chars: int) -> str:
    """A long string."""
    return _text(chars)


@server.tool()
def big_document(chars: int) -> dict[str, str]:
    """A long document."""
    return {"title": "Q4 ledger", "content": _text(chars)}


@server.tool()
def big_resource(chars: int) -> list[EmbeddedResource]:
    """A long embedded resource."""
    contents = TextResourceContents(uri="file:///q4.txt", mimeType="text/plain", text=_text(chars))
    return [EmbeddedResource(type="resource", resource=contents)]


server.run()
'''


def _text(chars: int) -> str:
    """The text the test server sends: numbered lines, so its beginning is recognisable."""
    return "".join(f"line {n:07d}\n" for n in range(chars // 13 + 1))[:chars]


@pytest.fixture
def reports(tmp_path: Path) -> list[str]:
    script = tmp_path / "reports_server.py"
    script.write_text(_SERVER, encoding="utf-8")
    return [sys.executable, str(script)]


async def _read(registry: Registry, name: str, args: dict[str, Any]) -> dict[str, Any]:
    await offered_soon(registry, 1, name)
    return (await registry.call(registry.default_agent, name, args, PRIYA)).for_model()


async def _audited(db: Database, tool: str) -> AuditRow:
    async with db.session() as session:
        rows = (await session.scalars(select(AuditRow).where(AuditRow.tool == tool))).all()
    return rows[-1]


async def test_a_192_kb_file_read_through_the_filesystem_server_gives_its_beginning(
    registry: Registry, db: Database, filesystem_stdio: list[str], filesystem_root: Path
) -> None:
    """npm's filesystem server's read_text_file of a 192,512-character file: the model gets its
    first 40,000 characters and a marker saying how much was left out, not "the first 0 of 1"
    and no rows; the audit line records the full size."""
    text = _text(192_512)
    (filesystem_root / "ledger.txt").write_text(text, encoding="utf-8")
    await connect(db, 1, "files", filesystem_stdio, trust_annotations=True)

    shown = await _read(
        registry, "files__read_text_file", {"path": str(filesystem_root / "ledger.txt")}
    )

    [row] = shown["rows"]
    [kept] = [value for value in row.values() if isinstance(value, str) and len(value) > 1_000]
    assert kept == text[:40_000]
    assert row["cut"] == "first 40,000 of 192,512 characters; the rest was left out"
    assert shown["scope"].endswith(": cut to first 40,000 of 192,512 characters")
    audited = await _audited(db, "files__read_text_file")
    assert "192,512 characters" in audited.detail


@pytest.mark.parametrize(
    ("tool", "key"),
    [("big_string", "result"), ("big_document", "content"), ("big_resource", "text")],
)
async def test_structured_content_and_resources_are_cut_not_dropped(
    registry: Registry, db: Database, reports: list[str], tool: str, key: str
) -> None:
    """A 5 MB string, a document with a 5 MB field and a 5 MB embedded resource each reach the
    model as their first 40,000 characters with the marker; their other fields are kept."""
    rules = {name: {"scope": "read"} for name in ("big_string", "big_document", "big_resource")}
    await connect(db, 1, "reports", reports, rules=rules)

    shown = await _read(registry, f"reports__{tool}", {"chars": 5_000_000})

    [row] = shown["rows"]
    assert row[key] == _text(40_000 - len(row.get("title", "")) - len(row.get("resource", "")))
    assert row["cut"].endswith(" of 5,000,000 characters; the rest was left out")
    assert shown["count"] == 1
    if tool == "big_document":
        assert row["title"] == "Q4 ledger"
    if tool == "big_resource":
        assert row["resource"] == "file:///q4.txt"
