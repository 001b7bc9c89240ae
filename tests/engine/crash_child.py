"""Approves one card in a separate process, whose write then hangs until the process is killed."""

from __future__ import annotations

import asyncio
import sys

from tests.engine.conftest import ARJUN, EVERYTHING, SECRET
from tests.engine.toy import TOY_TOOLS
from tools import CardSigner, Registry
from tools.db import Database


async def main(url: str, token: str) -> None:
    db = Database(url)
    registry = Registry(db, CardSigner([SECRET]), TOY_TOOLS)
    await registry.approve(EVERYTHING, token, ARJUN)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
