"""``python -m ledger --db PATH [--http --host H --port N]``: serves the ledger file."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ledger.server import build_server
from ledger.store import Ledger


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m ledger",
        description="Serves the demo supplier ledger over MCP (stdio unless --http).",
    )
    parser.add_argument("--db", type=Path, required=True, help="the SQLite file (created if new)")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (--http)")
    parser.add_argument("--port", type=int, default=8765, help="the port to listen on (--http)")
    options = parser.parse_args(argv)
    server = build_server(Ledger(options.db))
    if options.http:
        server.run(
            "streamable-http", host=options.host, port=options.port, streamable_http_path="/mcp"
        )
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
