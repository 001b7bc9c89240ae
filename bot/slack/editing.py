"""Takes Edit presses from Slack: a prefilled modal, then a new card in the old one's thread; never runs a write.

Edit opens a modal holding the card's current values for the arguments its tool lets a person
change. The submission is answered before the ack: the engine (``Registry.edit``) checks the
card and the presser like a decision and proposes again, and a refusal ("only ₹450.00 is left
to refund") goes back into the modal as ``response_action: errors``, with nothing changed. An
accepted edit posts the new card where the old one was, shows the old one replaced, and tells
the model what changed.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity, turns
from bot.cards.cardspec import clip
from bot.placement import Placement, Platform, SlackPlacement, first
from bot.presses.ladder import DATABASE_DOWN
from bot.services import Services
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.blocks import EDIT_ACTION, EDIT_INPUT, EDIT_VIEW, rich_text
from bot.slack.caller import caller_of
from bot.slack.inbound import installation_of, pressed_card, pressed_where
from bot.slack.texts import editing as texts
from tools import Caller, CardRecord, Proposal, Tool
from tools.errors import CountersignError, InvalidCardError, UnknownToolError

__all__ = ["edit_modal", "register"]

log = structlog.get_logger("bot.slack.editing")
_FIELD_PREFIX = "edit_"
# How long an edit waits for its old card's first copy to be recorded (its turn is recording
# it), and how often it looks.
_COPY_WAIT_S = 5.0
_COPY_POLL_S = 0.1


def _plain(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": clip(text, limit), "emoji": True}


def _shown(value: Any) -> str:
    return "" if value is None else str(value)


def _input(name: str, value: Any) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "input",
        "block_id": f"{_FIELD_PREFIX}{name}",
        "optional": True,
        "label": _plain(texts.field_label(name), 2000),
        "element": {
            "type": "plain_text_input",
            "action_id": EDIT_INPUT,
            "initial_value": _shown(value),
            "max_length": 500,
        },
    }
    hint = texts.field_hint(name)
    if hint:
        block["hint"] = _plain(hint, 2000)
    return block


def edit_modal(record: CardRecord, tool: Tool, *, token: str) -> dict[str, Any]:
    """The modal prefilled with the card's sealed values; the token rides in ``private_metadata``."""
    meta = json.dumps({"token": token, "card_id": record.card_id})
    return {
        "type": "modal",
        "callback_id": EDIT_VIEW,
        "private_metadata": meta,
        "title": _plain(texts.EDIT_MODAL_TITLE, 24),
        "submit": _plain(texts.EDIT_SUBMIT, 24),
        "close": _plain("Cancel", 24),
        "blocks": [
            rich_text(texts.editing(record.summary), "text"),
            *(_input(name, record.args.get(name)) for name in tool.editable),
        ],
    }


def _changes(tool: Tool, values: dict[str, Any]) -> dict[str, Any]:
    """What was typed, by argument; an emptied field means "none" where the tool allows it
    (a refund with no amount refunds all that is left), else an empty text."""
    changes: dict[str, Any] = {}
    for name in tool.editable:
        typed = (values.get(f"{_FIELD_PREFIX}{name}") or {}).get(EDIT_INPUT) or {}
        value = (typed.get("value") or "").strip()
        field = tool.args.model_fields[name]
        changes[name] = None if not value and field.default is None else value
    return changes


def register(app: AsyncApp, services: Services) -> None:
    async def on_edit(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        adapter = SlackAdapter(
            client, pressed_where(body, context), audit_channel=services.audit_channel
        )
        token, _ = pressed_card(action)
        try:
            await _open(services, adapter, caller_of(context), token)
        except DATABASE_DOWN as unreachable:
            # Its form is opened before the ack goes out; this once answered Slack 500.
            log.warning("edit_form_database_down", error=type(unreachable).__name__)
            await adapter.post_privately(adapter.words.database_unreachable())

    async def on_edit_submit(
        ack: AsyncAck,
        body: dict[str, Any],
        view: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
    ) -> None:
        await _submitted(services, ack, body=body, view=view, context=context, client=client)

    app.action(EDIT_ACTION)(on_edit)
    app.view(EDIT_VIEW)(on_edit_submit)


async def _open(
    services: Services, adapter: SlackAdapter, presser: identity.Once, token: str
) -> None:
    """The modal, or at once a private word to someone the card is not issued to.

    A courtesy only: the engine checks the card and the presser again on submission.
    """
    # The token names the card: a block id without one (a client that rewrote it) used to make
    # this press do nothing at all, and a press nobody answers looks like a broken button.
    card_id = services.registry.card_id_of(token)
    record = await services.registry.card(card_id) if card_id else None
    if record is None:
        await adapter.post_privately(adapter.words.refused(str(InvalidCardError())))
        return
    tool = await services.registry.card_tool(record.tenantid, record.tool)
    if tool is None:
        await adapter.post_privately(adapter.words.refused(str(UnknownToolError(record.tool))))
        return
    if not tool.editable:
        return  # no Edit button is drawn on such a card
    where = adapter.where
    caller = await presser.caller()
    if isinstance(caller, str) or not record.issued_to_person(caller.userid, caller.tenantid):
        placement = first(record, Platform.SLACK)
        await adapter.post_privately(
            adapter.words.not_your_card(placement.owner if placement else None)
        )
        return
    assert where.trigger_id, "a modal opens only in answer to a press"
    await adapter.client.views_open(
        trigger_id=where.trigger_id, view=edit_modal(record, tool, token=token)
    )


async def _submitted(
    services: Services,
    ack: AsyncAck,
    *,
    body: dict[str, Any],
    view: dict[str, Any],
    context: AsyncBoltContext,
    client: AsyncWebClient,
) -> None:
    """Answers the modal: errors in it, or closes it and posts the new card after the ack."""
    meta = json.loads(view.get("private_metadata") or "{}")
    token = str(meta.get("token", ""))
    found = await _editable(services, token)
    if found is None:
        await ack()
        return
    record, tool = found
    caller = await caller_of(context).caller()
    if isinstance(caller, str):
        await _refuse(ack, tool, texts.NOT_LINKED)
        return
    changes = _changes(tool, view["state"]["values"])
    try:
        result = await services.registry.edit(services.agent, token, caller, changes)
    except CountersignError as refused:
        await _refuse(ack, tool, clip(str(refused), 2000))
        return
    await ack()
    assert result.proposal is not None
    editor = Where(installation_of(context), str(body["user"]["id"]))
    _post_later(services, client, editor, result.proposal, caller=caller, old=record.card_id)


async def _editable(services: Services, token: str) -> tuple[CardRecord, Tool] | None:
    """The signed token's card and its tool, when the tool lets a person change some of its
    arguments.

    The card comes from the token alone, never from the modal's ``card_id``: the new card is
    posted where this one is. Placed by the metadata, Sam's edited Harbor card was posted
    into Fiesta's thread, where Fiesta's people saw it.
    """
    record = await services.registry.card_of_token(token)
    tool = await services.registry.card_tool(record.tenantid, record.tool) if record else None
    if record is None or tool is None or not tool.editable:
        return None
    return record, tool


async def _refuse(ack: AsyncAck, tool: Tool, message: str) -> None:
    """Keeps the modal open with ``message`` under its first field; nothing is changed."""
    await ack(response_action="errors", errors={f"{_FIELD_PREFIX}{tool.editable[0]}": message})


def _post_later(
    services: Services,
    client: AsyncWebClient,
    editor: Where,
    proposal: Proposal,
    *,
    caller: Caller,
    old: str,
) -> None:
    """Posts the new card where the old one is, in the press lane, after the modal has closed."""

    async def post() -> None:
        placed = await _old_copy(services, old)
        where = _where(editor.installation, editor.user, placed)
        await turns.post_edited(
            services,
            SlackAdapter(client, where, audit_channel=services.audit_channel),
            proposal,
            caller=caller,
            conversation=placed.conversation if placed is not None else None,
            installation=editor.installation,
        )

    services.tasks.press(post(), name=f"edit by {editor.user}")


async def _old_copy(services: Services, card_id: str) -> Placement | None:
    """The old card's first Slack copy, waiting up to ``_COPY_WAIT_S`` while it has none.

    Edit can be pressed on a card its turn is still recording: read at once, the card had no
    copy yet, and the edited card went to the editor's DM while the person watched the thread.
    """
    deadline = time.monotonic() + _COPY_WAIT_S
    while True:
        record = await services.registry.card(card_id)
        found = first(record, Platform.SLACK)
        if found is not None or record is None or record.posting is not None:
            return found
        if time.monotonic() >= deadline:
            log.info("edited_card_old_unrecorded", card_id=card_id)
            return None
        await asyncio.sleep(_COPY_POLL_S)


def _where(installation: str, user: str, old: object) -> Where:
    """Where the new card goes: the old card's channel and thread, else the editor's DM."""
    if isinstance(old, SlackPlacement):
        return Where(installation, user, channel=old.channel, thread_ts=old.thread_ts)
    return Where(installation, user)
