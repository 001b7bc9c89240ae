"""Finishes the cards of a Slack turn a killed process started: each recorded, every copy sent, once; never posts a card twice.

A turn records the cards it proposed in its inbox row before it posts any (``Inbox.proposed``).
Killed while they went out, it left a card posted and never recorded (its live buttons outlived
its decision), or recorded with the managers' copies unsent (they waited for a card that never
came), and its message was taken for answered. Whoever answers that message again finishes
each card here: a card's message found in its thread is recorded as its first copy, and each
person it is issued to who has no recorded copy gets one, unless their DM already holds it (a
copy sent and not recorded), which is recorded instead. Nothing is posted where Slack already
holds it. A card that never reached its thread is posted from here, signed anew from the
stored card (``bot.turns.again``); one nobody could press any more (decided, replaced, past its
time) is not, and the person is told to ask again (``SlackRoutes.resume``).
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_sdk.errors import SlackApiError

from bot import identity
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import Placement, SlackPlacement, first_copy
from bot.presses.copies import send_copies
from bot.presses.decisions import show_recorded
from bot.services import Services
from bot.slack.adapter import SlackAdapter
from bot.slack.blocks import APPROVE_ACTION, card_id_of_block
from bot.slack.outbound import slack_error
from bot.turns import Turn
from bot.turns.again import post_again
from tools import Caller

__all__ = ["finish_cards"]

log = structlog.get_logger("bot.slack.resumed")


async def finish_cards(
    services: Services, adapter: SlackAdapter, turn: Turn, card_ids: tuple[str, ...]
) -> bool:
    """Finishes each card the turn proposed; whether every one of them is in its thread."""
    where = adapter.where
    caller = await identity.resolve(
        services.directory, adapter, where.installation, where.user, user_team=where.user_team
    )
    if isinstance(caller, str):
        return False
    everywhere, done = True, set[str]()
    for card_id in card_ids:
        card = await cards.load(services.registry, card_id)
        if card is None or card.card_id in done:
            continue
        done.add(card.card_id)
        if adapter.here(card.placements) is None:
            found = await _record_posted(services, adapter, card, caller, turn)
            if found is None:
                # Never reached the thread: posted now, its copies with it, or the person is
                # told it was lost when nobody could press it any more.
                everywhere &= await post_again(
                    services,
                    adapter,
                    card,
                    caller=caller,
                    conversation=turn.conversation,
                    installation=where.installation,
                )
                continue
            card = found
        await _send_missing(services, adapter, card, caller)
    return everywhere


async def _record_posted(
    services: Services, adapter: SlackAdapter, card: Card, caller: Caller, turn: Turn
) -> Card | None:
    """Records the card's message in the turn's thread as its first copy; None if none is there."""
    where = adapter.where
    assert where.channel is not None
    found = await _message_of(adapter, card.card_id, where.channel, where.thread_ts)
    if found is None:
        log.info("resumed_card_not_posted", card_id=card.card_id)
        return None
    ts, token = found
    issued = [i.userid for i in card.lead.issued_to]
    placement = SlackPlacement(
        team=where.installation,
        channel=where.channel,
        ts=ts,
        thread_ts=where.thread_ts,
        # As the turn would have recorded it (``SlackAdapter.post_card``).
        user=where.user if issued in ([], [caller.userid]) else None,
        conversation=turn.conversation,
        token=token,
        editable=await _editable(services, card),
        person=caller.userid if where.channel.startswith("D") else None,
    )
    now = await cards.change_posting(services.registry, card, first_copy(placement))
    log.info("resumed_card_recorded", card_id=card.card_id)
    if now is not None and not now.open:
        await show_recorded(services, adapter, now)
    return now


async def _editable(services: Services, card: Card) -> tuple[str, ...]:
    if card.several:
        return ()
    lead = card.lead
    tool = await services.registry.card_tool(lead.tenantid, lead.tool)
    return tuple(tool.editable) if tool is not None else ()


async def _send_missing(
    services: Services, adapter: SlackAdapter, card: Card, caller: Caller
) -> None:
    """Sends a copy to each person the card is issued to, the asker aside, who has none."""
    has = {p.person for p in card.placements if p.person is not None}
    missing = [i for i in card.lead.issued_to if i.userid != caller.userid and i.userid not in has]
    first = adapter.here(card.placements)
    if not missing or first is None:
        return

    async def sent_before(user: str) -> Placement | None:
        return await _dm_copy(adapter, card.card_id, user)

    log.info("resumed_copies", card_id=card.card_id, missing=len(missing))
    await send_copies(
        services,
        adapter,
        card,
        missing,
        installation=adapter.where.installation,
        token=first.token,
        sent_before=sent_before,
    )


async def _dm_copy(adapter: SlackAdapter, card_id: str, user: str) -> Placement | None:
    """The copy of the card the person's DM with the app already holds, if any."""
    try:
        opened = await adapter.client.conversations_open(users=user)
    except SlackApiError as failed:
        log.warning("resumed_dm_unknown", slack_user=user, error=slack_error(failed))
        return None
    channel = str(opened["channel"]["id"])
    found = await _message_of(adapter, card_id, channel, None)
    if found is None:
        return None
    ts, token = found
    return SlackPlacement(
        team=adapter.where.installation,
        channel=channel,
        ts=ts,
        user=user,
        conversation=None,
        token=token,
    )


async def _message_of(
    adapter: SlackAdapter, card_id: str, channel: str, thread: str | None
) -> tuple[str, str] | None:
    """The app's message showing the card (its ts and the token its buttons carry) in a
    thread, or among a conversation's latest; None when there is none. The card's id is in
    its buttons' block id, so no other message is taken for it."""
    client = adapter.client
    try:
        if thread:
            page = await client.conversations_replies(channel=channel, ts=thread, limit=200)
        else:
            page = await client.conversations_history(channel=channel, limit=200)
    except SlackApiError as failed:
        log.warning("resumed_thread_unknown", channel=channel, error=slack_error(failed))
        return None
    for said in page.get("messages") or []:
        token = _token_for(said, card_id)
        if token is not None:
            return str(said["ts"]), token
    return None


def _token_for(said: dict[str, Any], card_id: str) -> str | None:
    """The signed token on the message's Approve, when its buttons are the card's."""
    for block in said.get("blocks") or []:
        if block.get("type") != "actions":
            continue
        if card_id_of_block(str(block.get("block_id") or "")) != card_id:
            return None
        for element in block.get("elements") or []:
            if element.get("action_id") == APPROVE_ACTION:
                return str(element.get("value") or "")
    return None
