"""Hands one aiohttp request to the MCP SDK's ASGI handler and streams its answer back.

The SDK serves streamable HTTP as ASGI; Countersign's server is aiohttp. A 2026-07-28 request
is one POST in and one response out (JSON, or an event stream while a long call runs), and an
older client's stateless request is the same, so the bridge is one exchange: the body read
once, the response started when the SDK starts it and written as it writes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

__all__ = ["Asgi", "exchange"]

Message = MutableMapping[str, Any]
Asgi = Callable[
    [Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


async def exchange(
    handler: Asgi, request: web.Request, state: dict[str, Any], *, body: bytes | None = None
) -> web.StreamResponse:
    """Runs ``handler`` on ``request``; ``state`` reaches it as the ASGI scope's ``state``;
    ``body``, when given, instead of the request's own."""
    body = await request.read() if body is None else body
    host, port = _server(request)
    scope: Message = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        # The bytes as they came: aiohttp's text of a header is UTF-8 (a byte that is none
        # kept as a surrogate), which latin-1 cannot always encode again, and a valid call
        # with "X-Note: café €" once became a 500 here, before the SDK saw it.
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": (request.remote or "", 0),
        "server": (host, port),
        "state": state,
    }
    delivered = asyncio.Event()
    response: web.StreamResponse | None = None

    async def receive() -> Message:
        if not delivered.is_set():
            delivered.set()
            return {"type": "http.request", "body": body, "more_body": False}
        # Nothing more comes in: the client's going away is the connection closing.
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}  # pragma: no cover - never reached

    async def send(message: Message) -> None:
        nonlocal response
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=int(message["status"]))
            for key, value in message.get("headers", ()):
                response.headers.add(key.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        elif message["type"] == "http.response.body" and response is not None:
            chunk = message.get("body", b"")
            if chunk:
                await response.write(chunk)
            if not message.get("more_body", False):
                await response.write_eof()

    await handler(scope, receive, send)
    if response is None:
        return web.json_response({"error": "the MCP handler gave no answer"}, status=500)
    return response


def _server(request: web.Request) -> tuple[str, int]:
    host, _, port = request.host.partition(":")
    return host, int(port) if port.isdigit() else (443 if request.scheme == "https" else 80)
