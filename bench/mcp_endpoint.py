"""Countersign's own ``/mcp``: ``tools/list`` and a read over HTTP, against the same in-process.

The product side is a real MCP client (the official SDK, streamable HTTP on loopback) calling
the production application: the token check, the SDK's stateless handler, the person's
catalogue, ``Registry.call``, the rows as structured content. The baseline is the same work
without the protocol: ``Registry.offered`` for the listing and ``Registry.call`` for the read,
called in the same process on the same database. The ratio is what speaking MCP over HTTP costs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.slackbot import running_bot
from bench.stage import sqlite_database
from bench.stats import Figure
from tools import Caller, McpTokens, Registry, Role

__all__ = ["run"]

RUNS = 5
CALLS = 40
ARJUN = Caller(2, 1, Role.MANAGER, "Arjun Mehta")


async def run(workdir: Path) -> list[Figure]:
    listing = Figure("/mcp tools/list", "ms/call", "lower")
    listing.note = "a real MCP client over loopback HTTP vs Registry.offered in-process; SQLite"
    read = Figure("/mcp read (list_branches)", "ms/call", "lower")
    read.note = "a real MCP client over loopback HTTP vs Registry.call in-process; SQLite"
    url = await sqlite_database(workdir, "endpoint.db")
    async with aiohttp.ClientSession() as http, running_bot(url, http) as bot:
        token, _ = await McpTokens(bot.services.db).create(1, ARJUN.userid, name="bench")
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers) as client_http,
            Client(streamable_http_client(_mcp_url(bot.url), http_client=client_http)) as client,
        ):
            registry = bot.registry
            await _warm(client, registry)
            for _ in range(RUNS):
                listing.add(
                    await _timed(lambda: _list(client)),
                    await _timed(lambda: _offered(registry)),
                )
                read.add(
                    await _timed(lambda: _read(client)),
                    await _timed(lambda: _call(registry)),
                )
    return [listing, read]


def _mcp_url(events: str) -> str:
    """The bot's /mcp beside the Slack endpoint the bench serves it at."""
    return events.removesuffix("/slack/events") + "/mcp"


async def _warm(client: Client, registry: Registry) -> None:
    await _list(client)
    await _read(client)
    await _offered(registry)
    await _call(registry)


async def _list(client: Client) -> None:
    listed = await client.list_tools(cache_mode="refresh")
    assert listed.tools


async def _read(client: Client) -> None:
    answer = await client.call_tool("list_branches", {})
    assert not answer.is_error


async def _offered(registry: Registry) -> None:
    assert await registry.offered(registry.default_agent, ARJUN.tenantid)


async def _call(registry: Registry) -> None:
    result = await registry.call(registry.default_agent, "list_branches", {}, ARJUN)
    assert result.rows


async def _timed(once: Callable[[], Awaitable[None]]) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        await once()
    return (time.perf_counter() - started) * 1000 / CALLS
