"""The Teams surface: Adaptive Card approvals and chat through the same core as Slack.

``TeamsRoutes.mount`` adds ``POST /api/messages`` to the app the composition root
(``bot.server``) builds, when MICROSOFT_APP_ID is set. The handlers turn activities into core
calls (``bot.turns.answer``, ``bot.presses.ladder``) through a ``TeamsAdapter``; cards are rendered by
``bot.teams.adaptive`` from the neutral ``bot.cards.cardspec.CardSpec``.
"""

from bot.teams.adapter import TeamsAdapter
from bot.teams.app import TEAMS, Teams, TeamsRoutes, auth_configuration, build_teams

__all__ = ["TEAMS", "Teams", "TeamsAdapter", "TeamsRoutes", "auth_configuration", "build_teams"]
