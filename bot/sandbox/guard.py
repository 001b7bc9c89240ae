"""Refuses every request the sandbox's own page or the bot did not send; never reads a body.

The sandbox serves a page that acts as anyone in the demo workspaces, so a web page on some
other site must not be able to drive it. Two ways in are shut here:

- Cross-site requests. A browser sends ``text/plain`` or form posts to any address without
  asking first (no CORS preflight), with an ``Origin`` header naming the site. A request that
  names an origin other than the page's own is refused (403), and every POST outside the
  Web API must be ``application/json``, which no cross-site request can send unasked (415).
- DNS rebinding. A site can make its own host name resolve to 127.0.0.1, and its scripts then
  read the sandbox as if it were that site. The ``Host`` header still names the site: only the
  loopback names (or the configured ``COUNTERSIGN_HOST``) with the port the request arrived on
  are served.

The bot calls the Web API and the response URLs server to server: no ``Origin`` header, the
loopback address as ``Host``; it passes. Its Web API calls keep their form encoding (the bearer
token is what authenticates them; a browser cannot add it across sites).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

__all__ = ["LOOPBACK_NAMES", "guard"]

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 (names, not a bind)
_FORM_ALLOWED = "/api/"  # Slack's Web API takes form posts; the bot token guards it

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def refusal(status: int, error: str) -> web.Response:
    """The JSON every refusal answers with, so the page (and a person with curl) can read why."""
    return web.json_response({"ok": False, "error": error}, status=status)


def guard(host: str) -> Middleware:
    """A middleware serving only same-origin requests addressed to ``host`` or loopback."""

    @web.middleware
    async def guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not _host_allowed(request, host):
            return refusal(
                403,
                f"This sandbox answers only at 127.0.0.1 or localhost, not at {request.host!r} "
                "(set COUNTERSIGN_HOST to serve another name).",
            )
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            return refusal(403, f"Requests from another origin ({origin}) are refused.")
        if (
            request.method == "POST"
            and not request.path.startswith(_FORM_ALLOWED)
            and request.content_type != "application/json"
        ):
            return refusal(415, "Send JSON (Content-Type: application/json).")
        return await handler(request)

    return guarded


def _host_allowed(request: web.Request, configured: str) -> bool:
    name, port = _split(request.host)
    if port != str(_arrived_on(request)):
        return False
    if name in LOOPBACK_NAMES or name == _bracketed(configured.lower()):
        return True
    # Shared on every interface on purpose: any address literal is fine (a rebinding attack
    # always needs a host *name*); names other than loopback are not.
    return configured in _WILDCARDS and _is_address(name)


def _split(host: str) -> tuple[str, str]:
    """``name:port`` or ``[v6]:port`` → (name, port); a missing port is HTTP's 80."""
    if host.startswith("["):
        name, _, rest = host.partition("]")
        return f"{name}]", rest.removeprefix(":") or "80"
    name, _, port = host.partition(":")
    return name.lower(), port or "80"


def _arrived_on(request: web.Request) -> int | None:
    sockname = request.transport.get_extra_info("sockname") if request.transport else None
    return int(sockname[1]) if isinstance(sockname, tuple) and len(sockname) > 1 else None


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True
