"""Takes Approve, Reject and Withdraw presses from Slack; never runs a write except through the core's ``bot.presses.ladder``.

Every press is acked at once and decided after the ack, in the task set. Nothing here reads the
card token: the engine verifies it (Withdraw by anyone but the card's asker is refused there),
and ``bot.presses.ladder`` shows every outcome the same way on every surface. Reject first opens a
modal asking why; its submission is the press. A press that moved a card refreshes the App
Home of everyone the card concerns.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity, presses
from bot.adapter import Form
from bot.cards import card as cards
from bot.cards import wording
from bot.cards.card import Card
from bot.placement import SlackPlacement
from bot.presses.ladder import DATABASE_DOWN
from bot.services import Services
from bot.slack import approving
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.blocks import (
    APPROVE_ACTION,
    APPROVE_VIEW,
    REASON_BLOCK,
    REASON_INPUT,
    REJECT_ACTION,
    REJECT_VIEW,
    WITHDRAW_ACTION,
)
from bot.slack.caller import caller_of
from bot.slack.commands import redraw_list
from bot.slack.home import refresh_homes
from bot.slack.inbound import installation_of, pressed_card, pressed_where, user_team
from bot.slack.pressed import answered_after, keep_press
from tools import CardStatus

__all__ = ["decide", "open_reject", "register"]

log = structlog.get_logger("bot.slack.actions")

Listener = Callable[..., Awaitable[None]]


def register(app: AsyncApp, services: Services) -> None:
    """Adds the listeners: Approve and Withdraw are decided at once, Reject asks why first."""
    app.action(APPROVE_ACTION)(_on_press(services, "approve"))
    app.view(APPROVE_VIEW)(_on_approve_submit(services))
    app.action(WITHDRAW_ACTION)(_on_press(services, "withdraw"))
    app.action(REJECT_ACTION)(_on_reject(services))
    app.view(REJECT_VIEW)(_on_reject_submit(services))


def _on_press(services: Services, verb: presses.Verdict) -> Listener:
    """A button that is the press itself: acked, then decided in the press lane."""

    async def on_press(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        adapter = _adapter(services, client, pressed_where(body, context))
        press = _button_press(adapter.where, body, action, verb=verb)
        if verb == "approve" and approving.asks_first(press):
            try:
                if await approving.confirm_or_refuse(services, adapter, press):
                    return  # its submission is the press
            except DATABASE_DOWN as unreachable:
                log.warning("approve_confirm_database_down", error=type(unreachable).__name__)
                await adapter.post_privately(adapter.words.database_unreachable())
                return
        await _kept_then_decided(
            services, adapter, press, body, context, redraw=_ephemeral_list(body)
        )

    return on_press


def _ephemeral_list(body: dict[str, Any]) -> str | None:
    """The response URL of the private list a press was made on, if it was made on one."""
    container = body.get("container") or {}
    url = body.get("response_url")
    return str(url) if container.get("is_ephemeral") and url else None


def _on_reject(services: Services) -> Listener:
    """Reject's button: acked, then the reason modal (``open_reject``)."""

    async def on_reject(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        adapter = _adapter(services, client, pressed_where(body, context))
        try:
            await open_reject(services, adapter, caller_of(context), *pressed_card(action))
        except DATABASE_DOWN as unreachable:
            # Its form is opened before the ack goes out; this once answered Slack 500.
            log.warning("reject_form_database_down", error=type(unreachable).__name__)
            await adapter.post_privately(adapter.words.database_unreachable())

    return on_reject


def _on_reject_submit(services: Services) -> Listener:
    """The reason modal's submission: the Reject press, decided like the others."""

    async def on_reject_submit(
        ack: AsyncAck,
        body: dict[str, Any],
        view: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        where, press = _rejection(installation_of(context), body, view)
        await _kept_then_decided(services, _adapter(services, client, where), press, body, context)

    return on_reject_submit


def _on_approve_submit(services: Services) -> Listener:
    """The confirm modal's submission: the Approve press, decided like the others."""

    async def on_approve_submit(
        ack: AsyncAck,
        body: dict[str, Any],
        view: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        where, press = approving.submitted(installation_of(context), body, view)
        await _kept_then_decided(services, _adapter(services, client, where), press, body, context)

    return on_approve_submit


async def _kept_then_decided(
    services: Services,
    adapter: SlackAdapter,
    press: presses.Press,
    body: dict[str, Any],
    context: AsyncBoltContext,
    *,
    redraw: str | None = None,
) -> None:
    """Keeps the press in the inbox (a process killed after the ack leaves it to another),
    then decides it in the press lane as the request's caller and marks it answered."""
    key = await keep_press(services, adapter.where, press, trigger=body.get("trigger_id"))
    presser = caller_of(context)
    work = answered_after(
        services, key, lambda: decide(services, adapter, press, presser, redraw=redraw)
    )
    services.tasks.press(work, name=f"{press.verb} by {press.user}")


def _adapter(services: Services, client: AsyncWebClient, where: Where) -> SlackAdapter:
    return SlackAdapter(client, where, audit_channel=services.audit_channel)


def _button_press(
    where: Where, body: dict[str, Any], action: dict[str, Any], *, verb: presses.Verdict
) -> presses.Press:
    """The press a card's button makes: its signed token and card, by whom, from where."""
    token, card_id = pressed_card(action)
    return presses.Press(
        installation=where.installation,
        user=where.user,
        token=token,
        verb=verb,
        card_id=card_id,
        user_team=where.user_team,
        pressed=_pressed(where, body, token),
    )


def _pressed(where: Where, body: dict[str, Any], token: str) -> SlackPlacement | None:
    """The card's message the button was pressed on, as a copy of it; None for anything else
    (an ephemeral list, the App Home, a modal)."""
    container = body.get("container") or {}
    ts, channel = container.get("message_ts"), where.channel
    if container.get("type") != "message" or container.get("is_ephemeral") or not ts:
        return None
    if not channel:
        return None
    thread = where.thread_ts or (body.get("message") or {}).get("thread_ts")
    return SlackPlacement(
        team=where.installation,
        channel=channel,
        ts=str(ts),
        thread_ts=thread,
        # The turn's conversation, as a mention in that thread is given (``bot.slack.events``).
        conversation=f"{where.installation}:{channel}:{thread or 'top'}" if thread else None,
        token=token,
    )


def _rejection(
    installation: str, body: dict[str, Any], view: dict[str, Any]
) -> tuple[Where, presses.Press]:
    """Where a submitted reason modal was opened (kept in its metadata) and the Reject it makes."""
    meta = json.loads(view.get("private_metadata") or "{}")
    value = (view["state"]["values"].get(REASON_BLOCK) or {}).get(REASON_INPUT) or {}
    where = Where(
        installation,
        str(body["user"]["id"]),
        channel=meta.get("channel"),
        thread_ts=meta.get("thread_ts"),
        user_team=user_team(body),
    )
    press = presses.Press(
        installation=where.installation,
        user=where.user,
        token=str(meta.get("token", "")),
        verb="reject",
        card_id=str(meta.get("card_id") or "") or None,
        reason=str(value.get("value") or ""),
        user_team=where.user_team,
    )
    return where, press


async def decide(
    services: Services,
    adapter: SlackAdapter,
    press: presses.Press,
    presser: identity.Once,
    *,
    redraw: str | None = None,
) -> None:
    """Decides the press, then refreshes the App Home of everyone the card concerns.

    Every home tab the card is on, not only the presser's: otherwise the asker's "Waiting for
    others" and the other approvers' "Waiting for you" keep a card somebody has already
    decided, with live buttons. ``redraw`` is the response URL of the
    private list the press was made on, drawn again as it stands now.
    """
    ended = await presses.decide(services, adapter, press, presser)
    card = await cards.load(services.registry, ended.card_id)
    if redraw is not None:
        await redraw_list(services, adapter, redraw, presser, pressed=card)
    if ended.outcome not in ("decided", "failed", "refused") or card is None:
        return
    record = card.items[0]  # whom a card of several concerns: its first item's people
    if ended.outcome == "refused" and record.status is not CardStatus.EXPIRED:
        return  # nothing moved: the card is as every home already shows it
    # A press from the App Home (no channel): its presser sees the card as it now stands there.
    from_home = adapter.where.channel is None and not card.open
    await refresh_homes(
        services,
        adapter.client,
        record,
        adapter.where.installation,
        pressed_by=adapter.where.user if from_home else None,
        decided=card.spec(now=services.registry.now()) if from_home else None,
    )


async def open_reject(
    services: Services,
    adapter: SlackAdapter,
    presser: identity.Once,
    token: str,
    card_id: str | None,
) -> None:
    """Opens the reason modal, or tells someone else's presser at once whose card it is.

    The owner check here is a courtesy (no modal for a card that is not yours); the engine
    checks again, and authoritatively, when the rejection is submitted.
    """
    card_id = services.registry.card_id_of(token) or card_id
    card = await cards.load(services.registry, card_id)
    placement = next((p for p in card.placements if p.platform == "slack"), None) if card else None
    owner = placement.owner if placement is not None else None
    if (owner is not None and owner != adapter.where.user) or not await _may_decide(presser, card):
        await adapter.post_privately(adapter.words.not_your_card(owner))
        return
    hint = wording.reason_hint(card.reason_seen_by) if card is not None else ""
    await adapter.open_form(Form("reject", card_id or "", token, _rejecting(card), hint))


def _rejecting(card: Card | None) -> str:
    """What the reason modal says is being rejected: the card, or each write still waiting."""
    if card is None or card.single is not None:
        return card.items[0].summary if card is not None else ""
    summaries = "; ".join(c.summary.rstrip(".") for c in card.live)
    return f"all {len(card.live)} changes: {summaries}." if card.live else ""


async def _may_decide(presser: identity.Once, card: Card | None) -> bool:
    """False only for a presser known here whom the card is not issued to (a routed card
    names no single owner; without this its asker got a reason modal for nothing)."""
    if card is None:
        return True
    caller = await presser.caller()
    return isinstance(caller, str) or card.lead.issued_to_person(caller.userid, caller.tenantid)
