"""Composes the web application from the surfaces that are configured; never handles a request.

Slack's application (``/slack/events`` and ``/healthz``) is the base; Teams adds
``POST /api/messages`` when MICROSOFT_APP_ID is set. One process, one port, one database, one
task set: a card posted through either surface can be decided by any process.
"""

from __future__ import annotations

from aiohttp import web
from microsoft_agents.hosting.core.authorization import AgentAuthConfiguration

from bot.settings import Settings
from bot.slack.server import web_application
from bot.surface import Surface

__all__ = ["application"]


def application(
    settings: Settings, surface: Surface, *, teams_auth: AgentAuthConfiguration | None = None
) -> web.Application:
    """The aiohttp app with every configured surface.

    ``teams_auth`` replaces the app registration's token check; only tests pass it (an
    anonymous configuration, so Activity JSON can be posted without a Bot Framework token).
    """
    web_app = web_application(settings, surface)
    if settings.teams_enabled or teams_auth is not None:
        from bot.slack.server import RUNTIME
        from bot.teams import TEAMS, mount
        from bot.teams.identity import PLATFORM
        from bot.teams.settle import settler

        mount(web_app, settings, surface, auth=teams_auth)
        # Cards settled without a press (after a crash) are shown in Teams too.
        app_id = settings.microsoft_app_id or ""
        web_app[RUNTIME].settlers[PLATFORM] = settler(web_app[TEAMS], surface, app_id)
    return web_app
