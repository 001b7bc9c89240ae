"""Builds what Slack sends an app (events, button presses, modal submissions, slash commands), and signs it.

Pure functions: shapes follow Slack's, and the signature is the v0 scheme computed by
slack_sdk's own verifier, so the bot checks a sandbox request exactly as it checks Slack's.
Never sends anything (``delivery`` does).
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

__all__ = [
    "APP_ID",
    "TEAM",
    "block_action",
    "command",
    "event",
    "form",
    "home_opened",
    "message",
    "signed",
    "thread_started",
    "view_submission",
]

TEAM = "T0FIESTA"
APP_ID = "A0COUNTERSIGN"
_ids = itertools.count(1)

Json = dict[str, Any]


def new_id(prefix: str) -> str:
    return f"{prefix}{int(time.time())}{next(_ids):06d}"


def signed(
    body: str, secret: str, *, timestamp: int | None = None, content_type: str
) -> dict[str, str]:
    """The headers Slack sends: timestamp and ``v0=`` HMAC-SHA256 of ``v0:{ts}:{body}``."""
    ts = str(timestamp if timestamp is not None else int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body) or ""
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
        "Content-Type": content_type,
    }


def event(
    inner: Json,
    *,
    event_id: str | None = None,
    team: str = TEAM,
    bot_user: str = "UBOT",
    enterprise: str | None = None,
) -> Json:
    """An Events API envelope around one event; ``enterprise`` makes it an org-wide install's
    (Slack then names the org, and no workspace, as the installation)."""
    envelope: Json = {
        "token": "unused",
        "team_id": team,
        "api_app_id": APP_ID,
        "type": "event_callback",
        "event_id": event_id or new_id("Ev"),
        "event_time": int(time.time()),
        "event": inner,
        "authorizations": [
            {
                "enterprise_id": enterprise,
                "team_id": None if enterprise else team,
                "user_id": bot_user,
                "is_bot": True,
                "is_enterprise_install": enterprise is not None,
            }
        ],
        "is_ext_shared_channel": False,
    }
    if enterprise:
        envelope["enterprise_id"] = enterprise
    return envelope


def message(
    user: str,
    text: str,
    *,
    channel: str,
    ts: str,
    kind: str = "message",
    thread_ts: str | None = None,
    channel_type: str = "channel",
    team: str = TEAM,
    **extra: Any,
) -> Json:
    """A message event (``kind="app_mention"`` for the mention twin Slack sends alongside)."""
    inner: Json = {
        "type": kind,
        "user": user,
        "text": text,
        "channel": channel,
        "ts": ts,
        "event_ts": ts,
        "team": team,
        **extra,
    }
    if kind == "message":
        inner["channel_type"] = channel_type
    if thread_ts:
        inner["thread_ts"] = thread_ts
    return inner


def home_opened(user: str, *, channel: str, view: Json | None = None) -> Json:
    """The event Slack sends when a person opens the app's Home tab."""
    inner: Json = {
        "type": "app_home_opened",
        "user": user,
        "channel": channel,
        "tab": "home",
        "event_ts": f"{time.time():.6f}",
    }
    if view is not None:
        inner["view"] = view
    return inner


def thread_started(
    user: str,
    *,
    channel: str,
    thread_ts: str,
    context: str | None = None,
    team: str = TEAM,
    kind: str = "assistant_thread_started",
) -> Json:
    """The event Slack sends when a person opens the app's assistant pane on a new thread;
    ``context`` is the channel they were looking at. With
    ``kind="assistant_thread_context_changed"``, they moved to another channel meanwhile."""
    seen: Json = {"team_id": team, "enterprise_id": None}
    if context:
        seen["channel_id"] = context
    return {
        "type": kind,
        "assistant_thread": {
            "user_id": user,
            "context": seen,
            "channel_id": channel,
            "thread_ts": thread_ts,
        },
        "event_ts": f"{time.time():.6f}",
    }


def block_action(
    user: str,
    *,
    action_id: str,
    value: str,
    block_id: str,
    channel: str | None,
    message_ts: str | None,
    thread_ts: str | None = None,
    channel_name: str = "ops",
    message: Json | None = None,
    user_team: str = TEAM,
    team: str = TEAM,
    view: Json | None = None,
    trigger_id: str | None = None,
    response_url: str = "https://hooks.invalid/actions",
    enterprise: str | None = None,
    ephemeral: bool = False,
    action_type: str = "button",
) -> Json:
    """A button press on a message (or, with ``view``, in the App Home); ``ephemeral`` for a
    message only its presser sees, which the press's ``response_url`` can replace.

    ``channel_name`` is Slack's: the channel's name, or ``directmessage`` in a DM with the
    app. ``message`` is the pressed message as Slack shows it to apps (its text, blocks and
    sender); ``thread_ts`` is set only for a message inside a thread, as on Slack's container.
    ``user_team`` differs from the installation in Slack Connect. ``enterprise`` makes it a
    press under an org-wide install, whose ``team`` Slack may send as null. ``action_type``
    is the pressed element's (``feedback_buttons`` for a thumb, with the thumb's value).
    """
    payload: Json = {
        "type": "block_actions",
        "api_app_id": APP_ID,
        "token": "unused",
        "team": None if enterprise else {"id": team, "domain": team.lower()},
        "user": {"id": user, "username": user.lower(), "team_id": user_team},
        "trigger_id": trigger_id or new_id("trigger."),
        "response_url": response_url,
        "actions": [
            {
                "type": action_type,
                "action_id": action_id,
                "block_id": block_id,
                "value": value,
                "action_ts": f"{time.time():.6f}",
            }
        ],
        **_org_wide(enterprise),
    }
    if view is not None:
        payload["container"] = {"type": "view", "view_id": view.get("id")}
        payload["view"] = view
        return payload
    msg: Json = {"text": "card", **(message or {}), "type": "message", "ts": message_ts}
    container: Json = {
        "type": "message",
        "message_ts": message_ts,
        "channel_id": channel,
        "is_ephemeral": ephemeral,
    }
    if thread_ts:
        msg["thread_ts"] = container["thread_ts"] = thread_ts
    payload["container"] = container
    payload["channel"] = {"id": channel, "name": channel_name}
    payload["message"] = msg
    return payload


def view_submission(
    user: str,
    view: Json,
    *,
    reason: str | None = None,
    values: Json | None = None,
    team: str = TEAM,
    enterprise: str | None = None,
) -> Json:
    """The submission of a modal this bot opened, with what was typed into its inputs.

    ``values`` is Slack's ``state.values`` shape; without it, ``reason`` fills the reject modal.
    ``enterprise`` makes it a submission under an org-wide install.
    """
    state = (
        values
        if values is not None
        else {"reason": {"reason_input": {"type": "plain_text_input", "value": reason}}}
    )
    return {
        "type": "view_submission",
        "team": None if enterprise else {"id": team, "domain": team.lower()},
        "user": {"id": user, "team_id": team},
        **_org_wide(enterprise),
        "api_app_id": APP_ID,
        "token": "unused",
        "trigger_id": new_id("trigger."),
        "view": {
            **view,
            "id": view.get("id", "V1"),
            "team_id": team,
            "app_installed_team_id": team,
            "state": {"values": state},
        },
    }


def command(
    user: str,
    text: str,
    *,
    channel: str,
    response_url: str,
    team: str = TEAM,
    name: str = "/countersign",
    enterprise: str | None = None,
) -> dict[str, str]:
    """A slash command, as the form fields Slack posts.

    It names the installation's workspace (and org), never the user's own: a Slack Connect
    user's command carries the same ``team_id`` as a member's.
    """
    org = (
        {
            "enterprise_id": enterprise,
            "enterprise_name": enterprise,
            "is_enterprise_install": "true",
        }
        if enterprise
        else {}
    )
    return {
        **org,
        "token": "unused",
        "team_id": team,
        "team_domain": team.lower(),
        "channel_id": channel,
        "channel_name": "ops",
        "user_id": user,
        "user_name": user.lower(),
        "command": name,
        "text": text,
        "api_app_id": APP_ID,
        "response_url": response_url,
        "trigger_id": new_id("trigger."),
    }


def _org_wide(enterprise: str | None) -> Json:
    """What an interaction under an org-wide install adds: the org, and that it is one."""
    if enterprise is None:
        return {}
    return {"enterprise": {"id": enterprise, "name": enterprise}, "is_enterprise_install": True}


def form(payload: Json) -> str:
    """Interactivity arrives as a form with one ``payload`` field holding JSON."""
    return urlencode({"payload": json.dumps(payload)})
