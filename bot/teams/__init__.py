"""The Teams surface: Adaptive Card approvals and chat over the same engine as Slack.

``mount(web_app, settings, surface)`` adds ``POST /api/messages`` to the shared aiohttp app
(``bot.web.application`` does it when MICROSOFT_APP_ID is set). Cards are rendered by
``bot.teams.adaptive`` from the neutral ``bot.cardspec.CardSpec``.
"""

from bot.teams.app import TEAMS, Teams, auth_configuration, build_teams, mount

__all__ = ["TEAMS", "Teams", "auth_configuration", "build_teams", "mount"]
