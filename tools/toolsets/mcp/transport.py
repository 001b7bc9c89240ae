"""Opens the SDK client of one source (streamable HTTP or a stdio child) and notices when it ended.

Nothing here sends a request. Secrets are read (``$VAR``) and opened (sealed values) here, at
connect time, and nowhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client._transport import ReadStream, TransportStreams
from mcp.client.session import MessageHandlerFnT
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp.types import Implementation

from tools.toolsets.mcp.config import SourceConfig
from tools.toolsets.mcp.sealing import SecretBox

__all__ = ["opened_client"]

_CLIENT = Implementation(name="countersign", version="1")
_Item = SessionMessage | Exception


@contextlib.asynccontextmanager
async def opened_client(
    config: SourceConfig,
    on_message: MessageHandlerFnT,
    *,
    ended: asyncio.Event,
    secrets: SecretBox | None = None,
) -> AsyncIterator[Client]:
    """The source's client, open; ``ended`` is set when a stdio server's output ends (it died).

    Without ``ended`` a dead stdio server went unnoticed until a request failed with
    "Connection closed": a card's preview, re-read on Approve, failed its card that way although
    the server could have been started again first.
    """
    if config.url is not None:
        timeout = httpx2.Timeout(config.timeout, connect=min(config.timeout, 10.0))
        headers = config.headers_now(secrets)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            server: Any = streamable_http_client(config.url, http_client=http)
            async with Client(
                server, client_info=_CLIENT, message_handler=on_message, cache=None
            ) as client:
                yield client
        return
    assert config.command is not None
    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=config.env_now(secrets) or None
    )
    watched: Any = _watched(params, ended)
    async with Client(watched, client_info=_CLIENT, message_handler=on_message, cache=None) as c:
        yield c


@contextlib.asynccontextmanager
async def _watched(params: StdioServerParameters, ended: asyncio.Event) -> AsyncIterator[Any]:
    streams: TransportStreams
    async with stdio_client(params) as streams:
        read, write = streams
        yield _Watched(read, ended), write


class _Watched:
    """A stdio server's output stream that says when it ended (EOF: the process went away)."""

    def __init__(self, inner: ReadStream[_Item], ended: asyncio.Event) -> None:
        self._inner, self._ended = inner, ended

    async def receive(self) -> _Item:
        try:
            return await self._inner.receive()
        except Exception:
            self._ended.set()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> _Item:
        try:
            return await self._inner.__anext__()
        except BaseException:
            self._ended.set()
            raise

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)
