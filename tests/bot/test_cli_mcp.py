"""`countersign mcp add|tools|list|remove|import`, run for real against a real MCP server.

The server is a few lines of the official SDK written into the test's directory and started
over stdio as the merchant's config says; an HTTP server that cannot be reached is a closed
loopback port.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.bot.test_cli import Ran, _closed_port, assert_one_line_failure, cli
from tools.db import Database, McpSourceRow
from tools.toolsets.mcp import SourceConfig, Sources

# Most tests start the MCP server in a process of its own.
pytestmark = pytest.mark.slow

FIESTA = 1

_SERVER = '''
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("ledger")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_suppliers() -> str:
    """Lists the suppliers."""
    return "Acme Oils"


@server.tool()
def pay_supplier(supplier: str, amount: float) -> str:
    """Pays a supplier."""
    return "paid"


@server.tool(name="export.csv", annotations=ToolAnnotations(readOnlyHint=True))
def export_csv() -> str:
    """A name no model can call: it has a dot."""
    return "a,b"


server.run()
'''


@pytest.fixture
def server(tmp_path: Path) -> list[str]:
    """The command line that starts the test's MCP server over stdio."""
    script = tmp_path / "ledger_server.py"
    script.write_text(_SERVER, encoding="utf-8")
    return [sys.executable, str(script)]


def _where(command: list[str]) -> str:
    """Where a stdio server is, as the output names it."""
    return SourceConfig(name="ledger", command=command[0], args=tuple(command[1:])).where


def _lines(ran: Ran) -> list[str]:
    """Stdout's lines with runs of spaces as one, so column widths do not matter."""
    return [" ".join(line.split()) for line in ran.out.splitlines()]


async def _rows(url: str) -> dict[str, dict[str, Any]]:
    """The stored config of each of Fiesta's sources, as the database holds it."""
    db = Database(url)
    try:
        async with db.session() as session:
            rows = await session.scalars(
                select(McpSourceRow).where(McpSourceRow.tenant_id == FIESTA)
            )
            return {row.name: dict(row.config) for row in rows}
    finally:
        await db.dispose()


async def _put(url: str, *configs: SourceConfig) -> None:
    db = Database(url)
    try:
        for config in configs:
            await Sources(db).put(FIESTA, config)
    finally:
        await db.dispose()


def test_trusting_annotations_changes_what_is_a_read(
    tmp_path: Path, demo_url: str, server: list[str]
) -> None:
    """Untrusted, a readOnlyHint tool is a write and says why; trusted, it is a read."""
    ran = cli(tmp_path, demo_url, "mcp", "add", "Fiesta Foods", "ledger", "--", *server)
    assert ran.code == 0, ran
    assert _lines(ran)[0] == f"Added the ledger server (stdio: {_where(server)}) to Fiesta Foods."
    assert "ledger__list_suppliers write: readOnlyHint not trusted (no --trust-annotations)" in (
        _lines(ran)
    )
    assert "ledger__pay_supplier write: not annotated" in _lines(ran)
    assert "ledger__export.csv not offered: name too long or not [A-Za-z0-9_-]" in _lines(ran)

    again = cli(
        tmp_path, demo_url, "mcp", "add", "fiesta", "ledger", "--trust-annotations", "--", *server
    )
    assert again.code == 0, again
    assert _lines(again)[0].startswith("Replaced the ledger server of Fiesta Foods")
    tools = cli(tmp_path, demo_url, "mcp", "tools", "Fiesta Foods")
    assert tools.code == 0, tools
    assert _lines(tools) == [
        "ledger__list_suppliers read: readOnlyHint, annotations trusted",
        "ledger__pay_supplier write: not annotated",
        "ledger__export.csv not offered: name too long or not [A-Za-z0-9_-]",
    ]
    assert asyncio.run(_rows(demo_url))["ledger"]["trust_annotations"] is True


def test_read_and_write_override_the_server_and_dashes_end_the_options(
    tmp_path: Path, demo_url: str, server: list[str]
) -> None:
    """--read and --write beat the annotations; what follows -- is the server's own command
    line, options included; a rule naming a tool the server lacks is kept with a warning."""
    ran = cli(
        tmp_path,
        demo_url,
        *("mcp", "add", "Fiesta Foods", "ledger", "--trust-annotations"),
        *("--write", "list_suppliers", "--read", "ledger__pay_supplier"),
        *("--role", "pay_suplier=manager", "--amount", "pay_supplier=amount:minor"),
        *("--", *server, "--write", "export.csv"),
    )
    assert ran.code == 0, ran
    assert "ledger__list_suppliers write: --write" in _lines(ran)
    assert "ledger__pay_supplier read: --read" in _lines(ran)
    warning = next(line for line in _lines(ran) if line.startswith("Warning:"))
    assert "the rules name pay_suplier, which the ledger server does not list" in warning
    stored = asyncio.run(_rows(demo_url))["ledger"]
    assert stored["args"] == [server[1], "--write", "export.csv"]
    assert stored["rules"] == {
        "list_suppliers": {"scope": "write"},
        "pay_supplier": {"scope": "read", "amount": "amount", "unit": "minor"},
        "pay_suplier": {"role": "manager"},
    }


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
async def test_a_header_written_as_a_variable_is_stored_as_the_variable(
    tmp_path: Path, database_url: str
) -> None:
    """`$VAR` is stored as `$VAR`, never its value; `mcp list` shows the variables, never a
    value; an unreachable URL is stored anyway."""
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    ran = await asyncio.to_thread(
        cli,
        tmp_path,
        database_url,
        *("mcp", "add", "Fiesta Foods", "shop", "--url", url),
        *("--header", "Authorization=$SHOP_TOKEN", "--header", "X-Edge=Bearer ${EDGE_TOKEN}"),
        SHOP_TOKEN="Bearer the-token-itself",
        EDGE_TOKEN="edge-token-itself",
    )
    assert ran.code == 0, ran
    assert _lines(ran)[0] == f"Added the shop server (http: {url}) to Fiesta Foods."
    assert "could not be listed just now" in ran.out
    assert "could not be reached" in ran.out
    assert "the-token-itself" not in ran.out
    assert "X-Edge" not in ran.out  # written with a variable: nothing to warn about
    stored = (await _rows(database_url))["shop"]
    assert stored["headers"] == {"Authorization": "$SHOP_TOKEN", "X-Edge": "Bearer ${EDGE_TOKEN}"}

    listed = await asyncio.to_thread(cli, tmp_path, database_url, "mcp", "list", "Fiesta Foods")
    assert listed.code == 0, listed
    assert _lines(listed)[0] == f"shop http {url}"
    assert "headers Authorization=$SHOP_TOKEN, X-Edge=Bearer ${EDGE_TOKEN}" in _lines(listed)
    assert "itself" not in listed.out


def test_tools_lists_every_server_that_answers_and_exits_1_for_one_that_does_not(
    tmp_path: Path, demo_url: str, server: list[str]
) -> None:
    """A server that cannot be reached is one line saying so; the others are still listed;
    the exit status is 1 with one line on stderr naming it."""
    down = f"http://127.0.0.1:{_closed_port()}/mcp"
    asyncio.run(
        _put(
            demo_url,
            SourceConfig(name="ledger", command=server[0], args=tuple(server[1:])),
            SourceConfig(name="shop", url=down),
        )
    )
    ran = cli(tmp_path, demo_url, "mcp", "tools", "Fiesta Foods")
    assert_one_line_failure(ran, "1 of 2 MCP servers of Fiesta Foods could not be listed (shop)")
    lines = _lines(ran)
    assert "ledger__pay_supplier write: not annotated" in lines
    shop = next(line for line in lines if line.startswith("shop "))
    assert shop.startswith("shop not listed: The shop server could not be reached")


def test_remove_forgets_the_server_and_an_unknown_name_lists_the_others(
    tmp_path: Path, demo_url: str
) -> None:
    """`remove` deletes the row; removing it again is one line naming the servers there are."""
    asyncio.run(
        _put(
            demo_url,
            SourceConfig(name="shop", url="http://127.0.0.1:9/mcp"),
            SourceConfig(name="ledger", url="http://127.0.0.1:9/ledger"),
        )
    )
    ran = cli(tmp_path, demo_url, "mcp", "remove", "Fiesta Foods", "shop")
    assert ran.code == 0, ran
    assert ran.out.startswith("Removed the shop server from Fiesta Foods")
    assert set(asyncio.run(_rows(demo_url))) == {"ledger"}
    again = cli(tmp_path, demo_url, "mcp", "remove", "Fiesta Foods", "shop")
    assert_one_line_failure(again, "Fiesta Foods has no MCP server named 'shop'", "ledger")


def test_import_a_claude_desktop_file(tmp_path: Path, demo_url: str, server: list[str]) -> None:
    """Each server of `mcpServers` is stored under a valid name (and the output says so),
    `${env:X}` becomes `$X`; `mcp tools` lists them (a literal secret: test_cli_mcp_secrets)."""
    down = f"http://127.0.0.1:{_closed_port()}/mcp"
    config = {
        "mcpServers": {
            "Ledger_Books": {
                "command": server[0],
                "args": server[1:],
                "env": {"LEDGER_API_TOKEN": "${env:LEDGER_API_TOKEN}"},
            },
            "shop": {"url": down, "headers": {"Authorization": "${env:SHOP_TOKEN}"}},
        }
    }
    file = tmp_path / "claude_desktop_config.json"
    file.write_text(json.dumps(config, indent=2), encoding="utf-8")
    ran = cli(
        tmp_path,
        demo_url,
        *("mcp", "import", "Fiesta Foods", str(file)),
        LEDGER_API_TOKEN="tok-0123456789abcdefghijkl",
    )
    assert ran.code == 0, ran
    lines = _lines(ran)
    assert any("renamed 'Ledger_Books' to 'ledger-books'" in line for line in lines)
    assert f"Imported ledger-books (stdio: {_where(server)}) into Fiesta Foods." in lines
    assert f"Imported shop (http: {down}) into Fiesta Foods." in lines
    assert "tok-0123456789abcdefghijkl" not in ran.out
    listed = cli(
        tmp_path,
        demo_url,
        *("mcp", "tools", "Fiesta Foods"),
        LEDGER_API_TOKEN="tok-0123456789abcdefghijkl",
    )
    tools = _lines(listed)
    assert (
        "ledger-books__list_suppliers write: readOnlyHint not trusted (no --trust-annotations)"
        in tools
    )
    assert any(line.startswith("shop not listed:") for line in tools)
    stored = asyncio.run(_rows(demo_url))
    assert stored["shop"]["headers"] == {"Authorization": "$SHOP_TOKEN"}
    assert stored["ledger-books"]["env"] == {"LEDGER_API_TOKEN": "$LEDGER_API_TOKEN"}


def test_import_a_vs_code_file(tmp_path: Path, demo_url: str, server: list[str]) -> None:
    """VS Code's top-level `servers` with `type` stdio and http are both imported; a type
    Countersign does not speak is skipped with a warning."""
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    config = {
        "inputs": [],
        "servers": {
            "ledger": {"type": "stdio", "command": server[0], "args": server[1:]},
            "remote": {"type": "http", "url": url},
            "old": {"type": "sse", "url": url},
        },
    }
    file = tmp_path / "mcp.json"
    file.write_text(json.dumps(config), encoding="utf-8")
    ran = cli(tmp_path, demo_url, "mcp", "import", "Fiesta Foods", str(file))
    assert ran.code == 0, ran
    lines = _lines(ran)
    tools = _lines(cli(tmp_path, demo_url, "mcp", "tools", "Fiesta Foods"))
    assert "ledger__pay_supplier write: not annotated" in tools
    assert f"Imported remote (http: {url}) into Fiesta Foods." in lines
    assert any(line.startswith("Warning: skipped 'old': type 'sse'") for line in lines)
    assert set(asyncio.run(_rows(demo_url))) == {"ledger", "remote"}


def test_a_bad_name_and_bad_json_are_one_line_errors_that_store_nothing(
    tmp_path: Path, demo_url: str
) -> None:
    """A name that cannot be a source's says what to type; JSON that does not parse names
    the line and column; neither stores a server."""
    ran = cli(tmp_path, demo_url, "mcp", "add", "Fiesta Foods", "Ledger_1", "--url", "http://x")
    assert_one_line_failure(ran, "'Ledger_1' cannot name a server", "e.g. ledger, shop-api")
    file = tmp_path / "broken.json"
    file.write_text('{\n  "mcpServers": {\n    "ledger": {"command": "x",}\n  }\n}\n')
    broken = cli(tmp_path, demo_url, "mcp", "import", "Fiesta Foods", str(file))
    assert_one_line_failure(broken, "is not valid JSON", "at line 3, column 31")
    assert asyncio.run(_rows(demo_url)) == {}
