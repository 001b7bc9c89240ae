"""The Slack surface: bolt app, events, approval buttons, Block Kit cards, identity, App Home.

``serve(settings)`` runs it; ``web_application(settings, surface)`` builds the aiohttp app for
tests and embedding. Everything the merchant sees in Slack is worded in ``bot.slack.texts``.
"""

from bot.slack.server import serve, web_application
from bot.surface import Assistant, Background, Reply, Surface

__all__ = ["Assistant", "Background", "Reply", "Surface", "serve", "web_application"]
