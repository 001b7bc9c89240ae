"""Fires signed Slack requests from a process of its own, so the client never slows the server.

``python -m bench.loadgen`` reads ``{"url": …, "requests": [[body, content_type], …]}`` on
stdin, sends them all at once, and prints each one's seconds to a complete 200 response as a
JSON list. The bot under test keeps its event loop to itself, as it would in production.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import aiohttp

from bench.stage import SIGNING_SECRET
from tests.support.slack_requests import signed

_LIMIT_S = 300.0


async def fire(url: str, requests: list[tuple[str, str]]) -> list[float]:
    now = int(time.time())
    prepared = [
        (body.encode(), signed(body, SIGNING_SECRET, timestamp=now, content_type=kind))
        for body, kind in requests
    ]
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def one(body: bytes, headers: dict[str, str]) -> float:
            started = time.perf_counter()
            async with http.post(url, data=body, headers=headers) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"Slack's endpoint answered {response.status}")
                return time.perf_counter() - started

        async with asyncio.timeout(_LIMIT_S):
            return list(await asyncio.gather(*(one(b, h) for b, h in prepared)))


def main() -> None:
    order = json.loads(sys.stdin.read())
    timings = asyncio.run(fire(order["url"], [tuple(r) for r in order["requests"]]))
    print(json.dumps(timings))


if __name__ == "__main__":
    main()
