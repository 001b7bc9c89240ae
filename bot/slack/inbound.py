"""Reads an inbound Slack request: its shape for bolt, its installation; never handles one.

Bolt parses a body before it checks the signature, and indexes into payloads without guards. A
body that was not a JSON object (``{not json``, ``[1, 2]``), a form whose ``payload`` was not
one, a press with an empty ``actions`` list or a ``view`` without a type each answered 500 with
a traceback in the log, and Slack retries an event answered 5xx. Slack never sends such bodies,
but anyone can: they get a 400 here and nothing runs. So does a payload missing what its
listener reads (a press or a modal without its ``user``, a modal whose metadata is not this
app's JSON, a mention without its ``ts``, a slash command without its ``user_id``). The
signature is still bolt's to check, once its timestamp is one it can read (``signable``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import parse_body

from bot.slack.adapter import Where
from bot.slack.blocks import card_id_of_block

__all__ = [
    "bolt_request",
    "installation_of",
    "pressed_where",
    "signable",
    "user_team",
    "well_formed",
]

# Slack's timestamp is whole seconds since 1970, in ASCII digits.
_TIMESTAMP = re.compile(r"[0-9]{1,12}")


def installation_of(context: AsyncBoltContext) -> str:
    """The id of the installation a request belongs to: enterprise id for org-wide installs.

    The installation is the workspace (or organisation) the app is installed in, as Slack's
    signed payload names it (an event's ``authorizations``, an action's ``team``), falling back
    to the token's own workspace — never the clicker's ``user.team_id``, which in a Slack
    Connect channel is their own workspace and would look up the wrong people. Taking the
    payload's first lets one bot token serve the sandbox's two workspaces as two installations.
    """
    if context.is_enterprise_install and context.enterprise_id:
        return context.enterprise_id
    auth = context.authorize_result
    team = context.team_id or (auth.team_id if auth is not None else None)
    return team or context.enterprise_id or ""


async def bolt_request(request: web.Request) -> AsyncBoltRequest | None:
    """The request as bolt takes it, or None when its body is not shaped like Slack's."""
    body = await request.text()
    if not well_formed(body, request.content_type):
        return None
    return AsyncBoltRequest(body=body, query=request.query_string, headers=request.headers)  # type: ignore[arg-type]


def signable(headers: Mapping[str, str]) -> bool:
    """False when the request's timestamp is there but is not a number of seconds.

    Bolt's signature check reads the timestamp with ``int()`` before anything else, so
    ``X-Slack-Request-Timestamp: abc`` from anyone, signed or not, answered 500 with a
    traceback in the log. Such a request is not Slack's: it gets a 401 before bolt sees it. A
    missing timestamp is bolt's to refuse, as it does.
    """
    timestamp = headers.get("X-Slack-Request-Timestamp")
    return timestamp is None or _TIMESTAMP.fullmatch(timestamp) is not None


def well_formed(body: str, content_type: str | None) -> bool:
    """True when bolt can parse ``body`` and match listeners on it without tripping over it."""
    try:
        # Bolt's own parser, so what is checked here is exactly what bolt will see.
        parsed: Any = parse_body(body, content_type)
    except ValueError:  # JSONDecodeError, in the body or in a form's payload field
        return False
    return _shaped(parsed)


def _shaped(parsed: Any) -> bool:
    if not isinstance(parsed, dict):
        return False
    event, actions, view = parsed.get("event"), parsed.get("actions"), parsed.get("view")
    if event is not None and not isinstance(event, dict):
        return False
    if actions is not None and not (
        isinstance(actions, list) and actions and all(isinstance(a, dict) for a in actions)
    ):
        return False
    if view is not None and not (isinstance(view, dict) and "type" in view):
        return False
    return _complete(parsed)


# What the listeners read from each kind of event without a guard. A mention or a DM without
# its ``ts``, a Home tab opened by nobody: each answered 500, and Slack retries a 5xx. A bot's
# mention may come without a ``user``; it is ignored before anything reads one, and answering
# it 400 would only make Slack send it again.
_EVENT_NEEDS = {
    "app_mention": ("channel", "ts"),
    "message": ("channel", "ts"),
    "app_home_opened": ("user",),
}
_BOTS_MARKS = ("bot_id", "bot_profile")


def _complete(parsed: dict[str, Any]) -> bool:
    """Whether the payload holds what its listener reads: who pressed or submitted, a modal's
    state and metadata, an event's ids, a slash command's user."""
    event = parsed.get("event")
    if isinstance(event, dict):
        return _event_complete(event)
    if "command" in parsed:
        return _text(parsed.get("user_id"))
    if "actions" in parsed or "view" in parsed:
        user = parsed.get("user")
        if not (isinstance(user, dict) and _text(user.get("id"))):
            return False
    view = parsed.get("view")
    if parsed.get("type") == "view_submission" and isinstance(view, dict):
        return _submitted_view(view)
    return True


# An assistant thread's events name the thread in ``assistant_thread``; bolt's middleware and
# the listener index into it.
_THREAD_EVENTS = ("assistant_thread_started", "assistant_thread_context_changed")
_THREAD_NEEDS = ("user_id", "channel_id", "thread_ts")


def _event_complete(event: dict[str, Any]) -> bool:
    kind = str(event.get("type"))
    if kind in _THREAD_EVENTS:
        thread = event.get("assistant_thread")
        return isinstance(thread, dict) and all(_text(thread.get(key)) for key in _THREAD_NEEDS)
    needs = _EVENT_NEEDS.get(kind, ())
    if kind == "app_mention" and not any(event.get(mark) for mark in _BOTS_MARKS):
        needs = (*needs, "user")
    return all(_text(event.get(key)) for key in needs)


def _submitted_view(view: dict[str, Any]) -> bool:
    """A submitted modal carries its inputs' state, and the metadata this app put in it: none,
    or a JSON object. Anything else was not a modal this app opened."""
    state = view.get("state")
    if not (isinstance(state, dict) and isinstance(state.get("values"), dict)):
        return False
    metadata = view.get("private_metadata") or "{}"
    try:
        return isinstance(metadata, str) and isinstance(json.loads(metadata), dict)
    except ValueError:
        return False


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def pressed_where(body: dict[str, Any], context: AsyncBoltContext) -> Where:
    """Where a button press came from: the installation, the presser, the channel and thread,
    and the trigger a modal needs."""
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    return Where(
        installation_of(context),
        str(body["user"]["id"]),
        channel=channel,
        thread_ts=(body.get("message") or {}).get("thread_ts"),
        trigger_id=body.get("trigger_id"),
        user_team=user_team(body),
    )


def user_team(body: dict[str, Any]) -> str | None:
    """The presser's own workspace: in a Slack Connect channel it differs from the installation."""
    team = (body.get("user") or {}).get("team_id")
    return str(team) if team else None


def pressed_card(action: dict[str, Any]) -> tuple[str, str | None]:
    """What a card's button carries: its signed token, and the card id its block was drawn for."""
    return str(action.get("value", "")), card_id_of_block(str(action.get("block_id", "")))
