"""Connects a workspace installed through an owner's install link; never connects one without its code.

``countersign invite "<merchant>"`` prints ``/slack/install?invite=<code>``. The install page
keeps the code in a short-lived, HTTP-only cookie while Slack's OAuth runs; when Slack sends the
installer back, the code is spent (once) to connect the workspace or org just installed to that
merchant. An install without a code, or with a spent one, installs the app but connects nothing:
the workspace's people are told it is not connected, and see no merchant's data.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Sequence
from http.cookies import SimpleCookie

import structlog
from aiohttp import web
from slack_bolt.oauth.async_callback_options import AsyncSuccessArgs
from slack_bolt.response import BoltResponse

from tools import Connections, Platform
from tools.errors import ConflictError, NotFoundError

__all__ = ["INVITE_COOKIE", "keep_invite", "on_installed"]

log = structlog.get_logger("bot.slack.install")

INVITE_COOKIE = "countersign-invite"
_COOKIE_SECONDS = 600  # as long as the OAuth state stays valid


def keep_invite(request: web.Request, response: web.StreamResponse) -> None:
    """Keeps the install link's code for the OAuth callback (nothing when there is none)."""
    code = request.query.get("invite", "").strip()
    if code:
        response.set_cookie(
            INVITE_COOKIE,
            code,
            max_age=_COOKIE_SECONDS,
            httponly=True,
            samesite="Lax",
            secure=request.secure,
            path="/slack",
        )


def on_installed(connections: Connections) -> Callable[[AsyncSuccessArgs], Awaitable[BoltResponse]]:
    """The OAuth success handler: spends the invite code, if any, and says what became of it."""

    async def installed(args: AsyncSuccessArgs) -> BoltResponse:
        found = args.installation
        org = bool(found.is_enterprise_install and found.enterprise_id)
        installation = str(found.enterprise_id if org else found.team_id)
        code = _invite(args.request.headers.get("cookie", []))
        if not code:
            log.info("installed_unconnected", installation=installation)
            return _page(
                "Countersign is installed, but this workspace is not connected to a merchant "
                "yet. Ask the merchant's owner for an install link (countersign invite) or to "
                f'run: countersign connect slack {installation} "<merchant>"'
            )
        try:
            await connections.redeem(code, Platform.SLACK, installation)
        except (NotFoundError, ConflictError) as refused:
            log.info("install_code_refused", installation=installation)
            return _page(f"Countersign is installed, but not connected: {refused}")
        log.info("installed_connected", installation=installation)
        return _page("Countersign is installed and connected to your merchant. You can close this.")

    return installed


def _invite(cookies: Sequence[str]) -> str:
    for header in cookies:
        jar: SimpleCookie = SimpleCookie()
        jar.load(header)
        if INVITE_COOKIE in jar:
            return jar[INVITE_COOKIE].value.strip()
    return ""


def _page(message: str) -> BoltResponse:
    body = (
        "<!doctype html><html><head><meta charset=utf-8>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Countersign</title></head>"
        f"<body><p>{html.escape(message)}</p></body></html>"
    )
    expired = f"{INVITE_COOKIE}=; Max-Age=0; Path=/slack; HttpOnly; SameSite=Lax"
    return BoltResponse(
        status=200,
        body=body,
        headers={"Content-Type": "text/html; charset=utf-8", "Set-Cookie": [expired]},
    )
