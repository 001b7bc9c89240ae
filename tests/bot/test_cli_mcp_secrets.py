"""`countersign mcp add|import` never store a secret as written: refused with the ${VAR} way, or encrypted with --store-secret.

The server is a few lines of the official SDK that will not start unless its environment holds
the token, so a listing proves the stored secret reached it; the rows are read raw from the
database to prove the plaintext is not there.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet

from tests.bot.test_cli import _closed_port, assert_one_line_failure, cli
from tests.bot.test_cli_mcp import _lines, _rows

pytestmark = pytest.mark.slow

TOKEN = "tok-0123456789abcdefghijkl"
KEY = Fernet.generate_key().decode()

_GUARDED = f'''
import os
import sys

from mcp.server.mcpserver import MCPServer

if os.environ.get("LEDGER_API_TOKEN") != "{TOKEN}":
    sys.exit("LEDGER_API_TOKEN is not the ledger's token")

server = MCPServer("ledger")


@server.tool()
def pay_supplier(supplier: str, amount: float) -> str:
    """Pays a supplier."""
    return "paid"


server.run()
'''


@pytest.fixture
def guarded(tmp_path: Path) -> list[str]:
    """The command line of a stdio server that starts only with LEDGER_API_TOKEN set right."""
    script = tmp_path / "guarded_server.py"
    script.write_text(_GUARDED, encoding="utf-8")
    return [sys.executable, str(script)]


def _raw(url: str) -> str:
    """Every stored source's config as the database holds it, as one text."""
    return json.dumps(asyncio.run(_rows(url)))


def test_a_literal_header_is_refused_with_the_variable_way_and_nothing_is_stored(
    tmp_path: Path, demo_url: str
) -> None:
    """`--header X-Api-Key=sk-…` and `--header X-Upstream=Bearer …` are refused: stdout says
    which line to put in the environment and the ${VAR} form to type, the values are never
    repeated, stderr is one line, and no server is stored."""
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    ran = cli(
        tmp_path,
        demo_url,
        *("mcp", "add", "Fiesta Foods", "shop", "--url", url),
        *("--header", "X-Api-Key=sk-live-4242abcd", "--header", "X-Upstream=Bearer up-4242"),
        *("--header", "X-Edge=Bearer ${EDGE_TOKEN}"),
    )
    assert_one_line_failure(ran, "Nothing was stored: a secret of shop is written out")
    assert "  export SHOP_X_API_KEY='…'" in ran.out
    assert "  --header 'X-Api-Key=${SHOP_X_API_KEY}'" in ran.out
    assert "  --header 'X-Upstream=Bearer ${SHOP_X_UPSTREAM}'" in ran.out
    assert "or add --store-secret" in ran.out
    assert "X-Edge" not in ran.out  # written as a variable: nothing to refuse
    assert "sk-live-4242abcd" not in ran.out + ran.err
    assert "up-4242" not in ran.out + ran.err
    assert asyncio.run(_rows(demo_url)) == {}


def test_store_secret_without_a_key_says_how_to_make_one_and_stores_nothing(
    tmp_path: Path, demo_url: str, guarded: list[str]
) -> None:
    """--store-secret with COUNTERSIGN_SECRETS_KEY unset is one line saying to set it and how
    to make one; nothing is stored."""
    ran = cli(
        tmp_path,
        demo_url,
        *("mcp", "add", "Fiesta Foods", "ledger", "--store-secret"),
        *("--env", f"LEDGER_API_TOKEN={TOKEN}", "--", *guarded),
    )
    assert_one_line_failure(
        ran, "--store-secret needs COUNTERSIGN_SECRETS_KEY", "openssl rand -base64 32"
    )
    assert asyncio.run(_rows(demo_url)) == {}


def test_a_stored_secret_is_encrypted_in_the_row_and_the_server_still_connects(
    tmp_path: Path, demo_url: str, guarded: list[str]
) -> None:
    """With --store-secret and a key, the row holds ciphertext only, `mcp list` shows no value,
    and the server (which starts only with the token) is listed, then and from the database
    later; without the key it cannot be, and the line says what to set."""
    add = cli(
        tmp_path,
        demo_url,
        *("mcp", "add", "Fiesta Foods", "ledger", "--store-secret"),
        *("--env", f"LEDGER_API_TOKEN={TOKEN}", "--", *guarded),
        COUNTERSIGN_SECRETS_KEY=KEY,
    )
    assert add.code == 0, add
    assert "Stored the env LEDGER_API_TOKEN of ledger encrypted" in add.out
    assert "ledger__pay_supplier write: not annotated" in _lines(add)
    stored: dict[str, Any] = asyncio.run(_rows(demo_url))["ledger"]
    assert TOKEN not in _raw(demo_url)
    sealed = stored["env"]["LEDGER_API_TOKEN"]["sealed"]
    assert Fernet(KEY.encode()).decrypt(sealed.encode()).decode() == TOKEN

    listed = cli(tmp_path, demo_url, "mcp", "list", "Fiesta Foods")
    assert "env LEDGER_API_TOKEN=(stored encrypted)" in _lines(listed)
    assert TOKEN not in listed.out
    tools = cli(tmp_path, demo_url, "mcp", "tools", "Fiesta Foods", COUNTERSIGN_SECRETS_KEY=KEY)
    assert tools.code == 0, tools
    assert "ledger__pay_supplier write: not annotated" in _lines(tools)
    keyless = cli(tmp_path, demo_url, "mcp", "tools", "Fiesta Foods")
    assert keyless.code == 1
    assert "COUNTERSIGN_SECRETS_KEY is not set" in keyless.out


def test_an_import_refuses_a_literal_secret_or_stores_it_encrypted(
    tmp_path: Path, demo_url: str, guarded: list[str]
) -> None:
    """A Claude Desktop file's literal env token: the import skips that server with the ${VAR}
    way and stores the others; again with --store-secret it is stored encrypted and connects."""
    down = f"http://127.0.0.1:{_closed_port()}/mcp"
    config = {
        "mcpServers": {
            "ledger": {
                "command": guarded[0],
                "args": guarded[1:],
                "env": {"LEDGER_API_TOKEN": TOKEN, "NODE_ENV": "production"},
            },
            "shop": {"url": down, "headers": {"Authorization": "Bearer ${env:SHOP_TOKEN}"}},
        }
    }
    file = tmp_path / "claude_desktop_config.json"
    file.write_text(json.dumps(config), encoding="utf-8")

    refused = cli(tmp_path, demo_url, "mcp", "import", "Fiesta Foods", str(file))

    assert refused.code == 0, refused
    assert "Warning: skipped 'ledger'; nothing of it was stored:" in refused.out
    assert "  export LEDGER_LEDGER_API_TOKEN='…'" in refused.out
    assert "  --env 'LEDGER_API_TOKEN=${LEDGER_LEDGER_API_TOKEN}'" in refused.out
    assert "NODE_ENV" not in refused.out  # not a credential: stored as it is
    assert TOKEN not in refused.out
    assert set(asyncio.run(_rows(demo_url))) == {"shop"}

    stored = cli(
        tmp_path,
        demo_url,
        *("mcp", "import", "Fiesta Foods", str(file), "--store-secret"),
        COUNTERSIGN_SECRETS_KEY=KEY,
    )

    assert stored.code == 0, stored
    assert "Stored the env LEDGER_API_TOKEN of ledger encrypted" in stored.out
    listed = cli(tmp_path, demo_url, "mcp", "tools", "Fiesta Foods", COUNTERSIGN_SECRETS_KEY=KEY)
    # The guarded server starts only with the right token, opened from the database.
    assert "ledger__pay_supplier write: not annotated" in _lines(listed)
    assert TOKEN not in _raw(demo_url)
    assert asyncio.run(_rows(demo_url))["ledger"]["env"]["NODE_ENV"] == "production"


def test_a_secrets_key_that_is_no_fernet_key_stops_every_command_saying_how_to_make_one(
    tmp_path: Path, demo_url: str
) -> None:
    """COUNTERSIGN_SECRETS_KEY set to something that cannot encrypt is one line at start-up,
    not a failure on the first server that needs it; the value is not echoed."""
    ran = cli(
        tmp_path, demo_url, "mcp", "list", "Fiesta Foods", COUNTERSIGN_SECRETS_KEY="hunter2hunter2"
    )
    assert_one_line_failure(
        ran, "COUNTERSIGN_SECRETS_KEY: every comma-separated key must be a Fernet key", "openssl"
    )
    assert "hunter2" not in ran.err
