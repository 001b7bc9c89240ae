"""Approves one MCP write in a separate process that holds a lease, as a server does; killed by the test.

``python tests/mcp/crash_child.py DATABASE_URL CARD_SECRET TOKEN`` approves the card as Priya
with the merchants' MCP sources as stored, then waits for the test to kill it while the call
is with the server.
"""

from __future__ import annotations

import asyncio
import sys

from tools import Caller, CardSigner, ProcessLease, Role
from tools.db import Database
from tools.toolsets.mcp import McpTools, SourceClients
from tools.toolsets.merchant import build_registry

PRIYA = Caller(1, 1, Role.OWNER, "Priya Raman")


async def main(url: str, secret: str, token: str) -> None:
    db = Database(url)
    lease = ProcessLease(db)
    registry = build_registry(db, CardSigner([secret]), lease=lease)
    registry.add_source(McpTools(db, SourceClients()))
    await lease.start()
    try:
        await registry.approve(registry.default_agent, token, PRIYA)
    finally:
        await registry.aclose()
        await lease.stop()
        await db.dispose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
