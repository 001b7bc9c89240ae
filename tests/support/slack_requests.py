"""Builds Slack's inbound payloads (events, button presses, modal submissions, slash commands), signed.

Shapes follow what Slack sends; signatures use the v0 scheme through slack_sdk's own verifier,
so the bot under test checks them exactly as in production.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

__all__ = [
    "TEAM",
    "block_action",
    "command",
    "event",
    "message",
    "signed",
    "view_submission",
]

TEAM = "T0FIESTA"
_ids = itertools.count(1)

Json = dict[str, Any]


def signed(
    body: str, secret: str, *, timestamp: int | None = None, content_type: str
) -> dict[str, str]:
    """The headers Slack sends: timestamp and ``v0=`` HMAC-SHA256 of ``v0:{ts}:{body}``."""
    ts = str(timestamp if timestamp is not None else int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
        "Content-Type": content_type,
    }


def event(inner: Json, *, event_id: str | None = None) -> Json:
    """An Events API envelope around one event."""
    return {
        "token": "unused", "team_id": TEAM, "api_app_id": "A0COUNTERSIGN", "type": "event_callback",
        "event_id": event_id or f"Ev{next(_ids):08d}", "event_time": int(time.time()), "event": inner,
        "authorizations": [{"enterprise_id": None, "team_id": TEAM, "user_id": "UBOT",
                            "is_bot": True, "is_enterprise_install": False}],
        "is_ext_shared_channel": False,
    }  # fmt: skip


def message(
    user: str, text: str, *, channel: str, ts: str, kind: str = "message",
    thread_ts: str | None = None, channel_type: str = "channel", **extra: Any,
) -> Json:  # fmt: skip
    inner: Json = {"type": kind, "user": user, "text": text, "channel": channel, "ts": ts,
                   "event_ts": ts, "team": TEAM, **extra}  # fmt: skip
    if kind == "message":
        inner["channel_type"] = channel_type
    if thread_ts:
        inner["thread_ts"] = thread_ts
    return inner


def block_action(
    user: str, *, action_id: str, value: str, block_id: str, channel: str, message_ts: str,
    thread_ts: str | None = None, user_team: str = TEAM,
) -> Json:  # fmt: skip
    """A button press on a message; ``user_team`` differs from the installation in Slack Connect."""
    msg: Json = {"type": "message", "ts": message_ts, "text": "card"}
    if thread_ts:
        msg["thread_ts"] = thread_ts
    return {
        "type": "block_actions", "api_app_id": "A0COUNTERSIGN", "token": "unused",
        "team": {"id": TEAM, "domain": "fiesta"},
        "user": {"id": user, "username": user.lower(), "team_id": user_team},
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                      "is_ephemeral": False},
        "trigger_id": f"trigger.{next(_ids)}", "channel": {"id": channel, "name": "ops"},
        "message": msg, "response_url": "https://hooks.invalid/actions",
        "actions": [{"type": "button", "action_id": action_id, "block_id": block_id,
                     "value": value, "action_ts": str(time.time())}],
    }  # fmt: skip


def view_submission(user: str, view: Json, *, reason: str | None) -> Json:
    """The submission of a modal this bot opened, with the reason typed into its input."""
    return {
        "type": "view_submission", "team": {"id": TEAM, "domain": "fiesta"},
        "user": {"id": user, "team_id": TEAM}, "api_app_id": "A0COUNTERSIGN", "token": "unused",
        "trigger_id": f"trigger.{next(_ids)}",
        "view": {**view, "id": "V1", "team_id": TEAM, "app_installed_team_id": TEAM,
                 "state": {"values": {"reason": {"reason_input": {"type": "plain_text_input",
                                                                   "value": reason}}}}},
    }  # fmt: skip


def command(user: str, text: str, *, channel: str, response_url: str) -> dict[str, str]:
    return {
        "token": "unused", "team_id": TEAM, "team_domain": "fiesta", "channel_id": channel,
        "channel_name": "ops", "user_id": user, "user_name": user.lower(), "command": "/countersign",
        "text": text, "api_app_id": "A0COUNTERSIGN", "response_url": response_url,
        "trigger_id": f"trigger.{next(_ids)}",
    }  # fmt: skip


def form(payload: Json) -> str:
    """Interactivity arrives as a form with one ``payload`` field holding JSON."""
    return urlencode({"payload": json.dumps(payload)})
