"""Keeps who a Teams turn is from in its turn state, found once for every handler of it; never decides what they may do.

Run before each turn's handlers (``AgentApplication.before_turn``): it reads the sender's
tenant and AAD object id from the activity (``bot.teams.identity.who``) and keeps an
``identity.Once`` for them in ``TurnContext.turn_state``. Nothing is looked up until a handler
asks (``caller_of``); every step of the turn then gets the same answer from the one lookup.
"""

from __future__ import annotations

from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot import identity
from bot.services import Services
from bot.teams.adapter import teams_adapter
from bot.teams.identity import who

__all__ = ["CALLER", "caller_of", "register"]

CALLER = "countersign.caller"


def register(application: AgentApplication[TurnState], services: Services) -> None:
    """Adds the before-turn step; the turn's handlers then read the caller with ``caller_of``."""

    async def caller_once(context: TurnContext, state: TurnState) -> bool:
        sender = who(context.activity)
        if sender is not None:
            adapter = await teams_adapter(services, context, sender)
            context.turn_state[CALLER] = identity.Once(
                services.directory, adapter, sender.tenant, sender.aad
            )
        return True  # the turn goes on to its handlers

    application.before_turn(caller_once)


def caller_of(context: TurnContext) -> identity.Once | None:
    """The turn's caller; None when the activity names no sender (then nobody is resolved)."""
    found = context.turn_state.get(CALLER)
    return found if isinstance(found, identity.Once) else None
