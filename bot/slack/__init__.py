"""The Slack surface: the bolt app, its listeners, the Slack adapter, Block Kit cards, App Home.

``SlackRoutes.mount`` adds Slack to the app the composition root (``bot.server``) builds; the
listeners turn Slack's payloads into core calls (``bot.turns.answer``, ``bot.presses.ladder``) through a
``SlackAdapter``. Everything the merchant reads in Slack is worded in ``bot.slack.texts``.
"""

from bot.slack.adapter import SlackAdapter, Where
from bot.slack.routes import SlackRoutes

__all__ = ["SlackAdapter", "SlackRoutes", "Where"]
