"""Puts who a Slack request is from in its bolt context, found once for all its listeners; never decides what they may do.

A bolt middleware, run for every request after bolt's own (signature, authorization): it reads
the installation, the user and the user's own workspace as the request states them and keeps
an ``identity.Once`` for them under ``context["caller"]``. Nothing is looked up until a listener
asks (``caller_of``), which it does after its ack, in its work; every step of the request then
gets the same answer from the one lookup.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity
from bot.services import Services
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.inbound import installation_of, user_team

__all__ = ["CALLER", "caller_of", "register"]

CALLER = "caller"


def register(app: AsyncApp, services: Services) -> None:
    """Adds the middleware; before any other listener or middleware that reads the caller."""

    async def caller_once(
        context: AsyncBoltContext,
        body: dict[str, Any],
        client: AsyncWebClient,
        next_: Callable[[], Awaitable[None]],
    ) -> None:
        user = _user_of(body)
        if user:
            installation = installation_of(context)
            # The request's own word on the user's workspace: a press's or a modal's
            # ``user.team_id``; a command, a Home tab and an assistant thread name none, and
            # then Slack is asked where the user belongs.
            where = Where(installation, user, user_team=user_team(body))
            context[CALLER] = identity.Once(
                services.directory,
                SlackAdapter(client, where),
                installation,
                user,
                user_team=where.user_team,
            )
        await next_()

    app.use(caller_once)


def caller_of(context: AsyncBoltContext) -> identity.Once:
    """The request's caller, as the middleware kept it."""
    found = context.get(CALLER)
    # Every listener that asks is for a request naming its user (``bot.slack.inbound``
    # answers 400 to one that does not), so the middleware has kept one.
    assert isinstance(found, identity.Once), "a request naming no user has no caller"
    return found


def _user_of(body: dict[str, Any]) -> str | None:
    """The Slack user a request is from: a press's or a modal's ``user``, a slash command's
    ``user_id``, an assistant thread's ``user_id``, else its event's ``user``."""
    user = body.get("user")
    if isinstance(user, dict):
        return _text(user.get("id"))
    if "command" in body:
        return _text(body.get("user_id"))
    event = body.get("event")
    if not isinstance(event, dict):
        return None
    thread = event.get("assistant_thread")
    if isinstance(thread, dict):
        return _text(thread.get("user_id"))
    return _text(event.get("user"))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
