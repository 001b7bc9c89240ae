"""The chat agent: a pydantic-ai loop over the registry's tools; never talks to a chat platform.

Surfaces (Slack, Teams, the sandbox) call ``Assistant.reply`` for each message a person writes
and ``Assistant.record`` when a card is decided, so the model knows on its next turn.
"""

from bot.agent.assistant import Assistant, Reply

__all__ = ["Assistant", "Reply"]
