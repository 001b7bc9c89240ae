"""Approves one card in a separate process that holds a lease, as a server does.

With ``wait_forever`` the write hangs until the process is killed; with ``wait_for_signal`` it
finishes when the process receives SIGUSR1.
"""

from __future__ import annotations

import asyncio
import sys

from tests.engine.conftest import ARJUN, EVERYTHING, SECRET
from tests.engine.toy import TOY_TOOLS
from tools import CardSigner, ProcessLease, Registry
from tools.db import Database


async def main(url: str, token: str) -> None:
    db = Database(url)
    lease = ProcessLease(db)
    registry = Registry(db, CardSigner([SECRET]), TOY_TOOLS, lease=lease)
    await lease.start()
    try:
        await registry.approve(EVERYTHING, token, ARJUN)
    finally:
        await lease.stop()
        await db.dispose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
