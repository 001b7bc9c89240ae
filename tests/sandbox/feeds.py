"""Reading the sandbox page's live feed (Server-Sent Events) the way the page does."""

from __future__ import annotations

import json
from typing import Any

import aiohttp

Json = dict[str, Any]


async def event(feed: aiohttp.ClientResponse) -> tuple[str, Json]:
    """The feed's next event: its kind and its data (comments and keepalives skipped)."""
    kind, data = "message", ""
    while True:
        line = (await feed.content.readline()).decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data = line.removeprefix("data: ")
        elif line == "" and data:
            return kind, json.loads(data)


async def opened(feed: aiohttp.ClientResponse) -> Json:
    """The whole view every stream starts with."""
    kind, data = await event(feed)
    assert kind == "state", kind
    return data
