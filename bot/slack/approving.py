"""Answers Approve on a channel's copy of a card: the confirm modal for whom it is issued to, the refusal for anyone else; never runs a write itself.

Slack draws a button's confirm dialog for whoever presses, before anything reaches the app, so
a channel's copy (read by everyone there) carries none: Meera pressing Arjun's card was asked
"Yes, approve", confirmed, and only then refused. Here the press itself is answered. Someone the
card is issued to gets the modal with the dialog's words said to them; its submission is the
press (``bot.slack.actions.decide``, where the engine checks everything again). Anyone else's
press goes straight to the engine, which refuses it, on their first press.
"""

from __future__ import annotations

import json
from typing import Any

import structlog

from bot import identity, presses
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import SlackPlacement
from bot.services import Services
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.blocks import approve_modal

__all__ = ["asks_first", "confirm_or_refuse", "submitted"]

log = structlog.get_logger("bot.slack.approving")


def asks_first(press: presses.Press) -> bool:
    """Whether an Approve was pressed on a channel's copy (its button had no dialog)."""
    pressed = press.pressed
    return isinstance(pressed, SlackPlacement) and not pressed.channel.startswith("D")


async def confirm_or_refuse(
    services: Services, adapter: SlackAdapter, press: presses.Press
) -> bool:
    """Opens the confirm modal when the presser may approve the card; False when they may not
    (or it is not waiting), so the press is decided as it is and refused by the engine."""
    registry = services.registry
    # By the token alone: a press whose token does not hold is refused as not valid, at once.
    card_id = registry.card_id_of(press.token)
    card = await cards.load(registry, card_id) if card_id is not None else None
    if card is None or not card.open or not adapter.where.trigger_id:
        return False
    if not await _may_approve(services, adapter, card):
        return False
    meta = _meta(press)
    view = approve_modal(card.spec(token=press.token, now=registry.now()), meta=meta)
    await adapter.client.views_open(trigger_id=adapter.where.trigger_id, view=view)
    log.info("approve_confirm_opened", card_id=card.card_id, slack_user=press.user)
    return True


async def _may_approve(services: Services, adapter: SlackAdapter, card: Card) -> bool:
    """Whether the presser is linked, the card is issued to them, and they have not approved it
    already (a first of two): anyone else is refused at once, with no modal."""
    where = adapter.where
    caller = await identity.resolve(
        services.directory, adapter, where.installation, where.user, user_team=where.user_team
    )
    if isinstance(caller, str):
        return False
    lead = card.lead
    return lead.issued_to_person(caller.userid, caller.tenantid) and not all(
        item.approved_by(caller.userid) for item in card.live
    )


def _meta(press: presses.Press) -> dict[str, Any]:
    pressed = press.pressed
    assert isinstance(pressed, SlackPlacement)
    return {
        "token": press.token,
        "card_id": press.card_id,
        "channel": pressed.channel,
        "thread_ts": pressed.thread_ts,
        "ts": pressed.ts,
    }


def submitted(
    installation: str, body: dict[str, Any], view: dict[str, Any]
) -> tuple[Where, presses.Press]:
    """Where the confirm modal was opened from, and the Approve its submission makes."""
    meta = json.loads(view.get("private_metadata") or "{}")
    user = body.get("user") or {}
    team = user.get("team_id")
    channel, thread = meta.get("channel"), meta.get("thread_ts")
    where = Where(
        installation,
        str(user["id"]),
        channel=channel,
        thread_ts=thread,
        user_team=str(team) if team else None,
    )
    token = str(meta.get("token") or "")
    pressed = (
        SlackPlacement(
            team=installation,
            channel=str(channel),
            ts=str(meta["ts"]),
            thread_ts=thread,
            conversation=f"{installation}:{channel}:{thread}" if thread else None,
            token=token,
        )
        if channel and meta.get("ts")
        else None
    )
    press = presses.Press(
        installation=installation,
        user=where.user,
        token=token,
        verb="approve",
        card_id=str(meta.get("card_id") or "") or None,
        user_team=where.user_team,
        pressed=pressed,
    )
    return where, press
