"""Refuses a ``/mcp`` request that is not a POST or names another server; never reads its token.

Every other method gets 405 with ``Allow: POST``, as the spec allows for GET: a stateless server
keeps no standing stream to open (the SDK's GET streamed pings until the client left, then
logged its going as an error) and no session to DELETE.

DNS rebinding: a page at evil.example whose name is then made to resolve to this machine has
the browser send its requests here, naming evil.example as the Host and http://evil.example
as the Origin. The streamable HTTP transport says a server MUST check the Origin; a foreign
Host gets 421 and a present, foreign Origin 403. A request with no Origin (every client that
is not a browser) is checked by its Host only.

This server's names are loopback's (127.0.0.1, localhost, [::1]) on the port the request came
in on, and the host and origin of ``COUNTERSIGN_PUBLIC_URL``. Loopback's stay allowed beside a
public URL: a proxy on the same machine (nginx's default) names the upstream, 127.0.0.1:<port>,
as the Host, and a rebound name is never a loopback one.

The checks are the MCP SDK's own (``TransportSecurityMiddleware``), run here rather than in its
session manager: the manager takes its settings once, as the app starts and before a socket is
bound (a test server's, ``countersign run``'s free port, a worker's inherited one), so it
cannot know the port; and here a refused request is answered before its token is looked up.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request

__all__ = ["Guard"]

_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
_DEFAULT_PORTS = {"http": 80, "https": 443}


class Guard:
    """The method, Host and Origin checks of ``/mcp``, for loopback and one public URL."""

    def __init__(self, public_url: str | None) -> None:
        self._hosts, self._origins = _public(public_url) if public_url else ([], [])
        self._checks: dict[int | None, TransportSecurityMiddleware] = {}

    async def refusal(self, request: web.Request) -> web.Response | None:
        """405, 421 or 403 saying what to do, or None for a POST naming this server."""
        if request.method != "POST":
            return _not_allowed()
        return await self.foreign(request)

    async def foreign(self, request: web.Request) -> web.Response | None:
        """421 or 403 for a request naming another server (any method), else None: the
        OAuth endpoints and the authorization page are checked as ``/mcp`` is."""
        port = _local_port(request)
        check = self._checks.get(port)
        if check is None:
            check = self._checks[port] = self._check(port)
        scope = {"type": "http", "headers": [(k.lower(), v) for k, v in request.raw_headers]}
        refused = await check.validate_request(Request(scope))
        if refused is None:
            return None
        if refused.status_code == 421:
            host = request.headers.get("Host", "")
            return _refused(
                421,
                f"This server does not answer for the host {host!r}. If that is the address "
                f"it is reached at, set COUNTERSIGN_PUBLIC_URL to it (e.g. https://{host}).",
            )
        origin = request.headers.get("Origin", "")
        return _refused(
            403,
            f"Requests from the web page at {origin!r} may not call /mcp: a browser page may "
            "only call it from this server's own address (COUNTERSIGN_PUBLIC_URL). Clients "
            "other than browsers send no Origin.",
        )

    def _check(self, port: int | None) -> TransportSecurityMiddleware:
        hosts, origins = list(self._hosts), list(self._origins)
        if port is not None:
            names = [f"{name}:{port}" for name in _LOOPBACK] + (
                list(_LOOPBACK) if port == 80 else []
            )
            hosts += names
            origins += [f"http://{name}" for name in names]
        settings = TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)
        return TransportSecurityMiddleware(settings)


def _public(url: str) -> tuple[list[str], list[str]]:
    """The Host values and the Origin of a public URL (the settings checked its shape)."""
    parts = urlsplit(url)
    hostname = (parts.hostname or "").lower()
    host = f"[{hostname}]" if ":" in hostname else hostname
    default = _DEFAULT_PORTS[parts.scheme]
    port = parts.port or default
    with_port = f"{host}:{port}"
    if port == default:
        return [host, with_port], [f"{parts.scheme}://{host}"]
    return [with_port], [f"{parts.scheme}://{with_port}"]


def _local_port(request: web.Request) -> int | None:
    """The port the request came in on: the one loopback's names must carry."""
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    if isinstance(sockname, tuple) and len(sockname) >= 2 and isinstance(sockname[1], int):
        return sockname[1]
    return None


def _refused(status: int, message: str) -> web.Response:
    error = "misdirected_request" if status == 421 else "forbidden_origin"
    return web.json_response({"error": error, "message": message}, status=status)


def _not_allowed() -> web.Response:
    return web.json_response(
        {
            "error": "method_not_allowed",
            "message": "/mcp takes POST only: it keeps no session, so there is no stream to "
            "GET and nothing to DELETE. Send each JSON-RPC message as a POST.",
        },
        status=405,
        headers={"Allow": "POST"},
    )
