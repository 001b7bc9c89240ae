"""The fake Slack Web API now lives in ``bot.sandbox``; this name stays for older imports only.

There is one fake: ``bot.sandbox.WebApi`` over an in-memory ``Workspace``. New code imports it
from ``bot.sandbox``.
"""

from __future__ import annotations

from bot.sandbox import BOT_TOKEN, Call, Message, SlackUser
from bot.sandbox import WebApi as FakeSlack

__all__ = ["BOT_TOKEN", "Call", "FakeSlack", "Message", "SlackUser"]
