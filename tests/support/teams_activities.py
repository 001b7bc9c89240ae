"""Builds the Activity JSON Teams posts to ``/api/messages``: messages, card invokes and submits."""

from __future__ import annotations

import itertools
from typing import Any

from tests.support.fake_connector import TENANT, Member

__all__ = ["BOT", "CHANNEL", "TEAM", "TENANT", "invoke", "message", "submit"]

TEAM = "19:fiesta-team@thread.tacv2"
CHANNEL = "19:ops@thread.tacv2;messageid=1700000000001"
BOT = {"id": "28:countersign-bot", "name": "Countersign"}

Json = dict[str, Any]
_ids = itertools.count(1)


def _base(
    member: Member, *, conversation: str, service_url: str, kind: str, personal: bool = False
) -> Json:
    """An activity in a channel thread, or (``personal``) in a person's 1:1 chat with the bot."""
    if personal:
        return {
            **_base(member, conversation=CHANNEL, service_url=service_url, kind=kind),
            "conversation": {
                "id": conversation,
                "conversationType": "personal",
                "isGroup": False,
                "tenantId": TENANT,
            },
            "channelData": {"tenant": {"id": TENANT}},
        }
    return {
        "type": kind,
        "id": f"f:{next(_ids):08d}",
        "channelId": "msteams",
        "serviceUrl": service_url,
        "timestamp": "2026-03-01T10:00:00.000Z",
        "from": {"id": member.address, "name": member.name, "aadObjectId": member.aad},
        "recipient": dict(BOT),
        "conversation": {
            "id": conversation,
            "conversationType": "channel",
            "isGroup": True,
            "tenantId": TENANT,
        },
        "channelData": {
            "tenant": {"id": TENANT},
            "team": {"id": TEAM},
            "channel": {"id": conversation.split(";", maxsplit=1)[0]},
        },
    }


def message(
    member: Member,
    text: str,
    *,
    service_url: str,
    conversation: str = CHANNEL,
    personal: bool = False,
) -> Json:
    """An @mention of the bot in a channel thread, or (``personal``) a message in the person's
    1:1 chat with the bot (no mention there), as Teams delivers it."""
    base = _base(
        member,
        conversation=conversation,
        service_url=service_url,
        kind="message",
        personal=personal,
    )
    if personal:
        return {**base, "text": text, "textFormat": "plain"}
    mention = f"<at>{BOT['name']}</at>"
    return {
        **base,
        "text": f"{mention} {text}",
        "textFormat": "plain",
        "entities": [{"type": "mention", "text": mention, "mentioned": dict(BOT)}],
    }


def invoke(
    member: Member,
    verb: str,
    data: Json,
    *,
    service_url: str,
    reply_to: str,
    conversation: str = CHANNEL,
    personal: bool = False,
) -> Json:
    """An Action.Execute press (``adaptiveCard/action``) on the card message ``reply_to``."""
    base = _base(
        member, conversation=conversation, service_url=service_url, kind="invoke", personal=personal
    )
    return {
        **base,
        "name": "adaptiveCard/action",
        "replyToId": reply_to,
        "value": {
            "action": {"type": "Action.Execute", "verb": verb, "data": data},
            "trigger": "manual",
        },
    }


def submit(
    member: Member, data: Json, *, service_url: str, reply_to: str, conversation: str = CHANNEL
) -> Json:
    """An Action.Submit press from an older client: a message carrying the data as ``value``."""
    return {
        **_base(member, conversation=conversation, service_url=service_url, kind="message"),
        "replyToId": reply_to,
        "value": data,
    }
