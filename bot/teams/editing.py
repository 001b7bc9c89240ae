"""Takes Edit presses on Teams cards: the form, then a new card where the old one was; never runs a write.

Edit (an ``Action.Execute`` on the card of a person it is issued to) is answered with the Edit
form in place of the card, for that person only. "Make new card" sends the typed values with
the card's signed token to the engine (``Registry.edit``), which checks the card and the
presser like a decision and proposes again, as the presser, through the same ``propose`` as
the model's call. A value it refuses ("only ₹450.00 is left to refund") is answered with the
form again, the error under the field and nothing changed. An accepted edit posts the new card
where the old one was asked (``bot.turns.answer.post_edited``, as Slack does), shows every copy of the
old one replaced, and answers the presser with their copy as it now stands. Someone the card
is not issued to gets the private refusal a press gets. Older clients send the same as an
``Action.Submit`` message: the form is then sent in the conversation, and a refusal said there.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from http import HTTPStatus
from types import NoneType, UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import structlog
from microsoft_agents.activity import AdaptiveCardInvokeResponse
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot import identity, turns
from bot.cards.card import one
from bot.placement import Platform, TeamsPlacement, first
from bot.presses.decisions import show
from bot.services import Services
from bot.teams.actions import refresh, visible
from bot.teams.adapter import TeamsAdapter, teams_adapter
from bot.teams.adaptive import CARD_TYPE, VERB_EDIT, notice_card
from bot.teams.caller import caller_of
from bot.teams.copy_view import card_activity, decided_card
from bot.teams.edit_card import VERB_EDIT_CANCEL, VERB_EDIT_SAVE, EditField, edit_form, typed
from bot.teams.identity import who
from bot.teams.outbound import Outbound
from bot.teams.texts import EDIT_TITLE, GONE_HERE
from tools import Caller, CardRecord, CardStatus, Proposal, Tool
from tools.errors import CardExpiredError, CountersignError, NotYourCardError

__all__ = ["open_form", "register", "save"]

log = structlog.get_logger("bot.teams.editing")
Json = dict[str, Any]


def _text(data: object, key: str) -> str:
    value = data.get(key) if isinstance(data, Mapping) else None
    return str(value) if value is not None else ""


def _numeric(tool: Tool, name: str) -> bool:
    """Whether an argument holds a number (an amount, a delta, a price): an ``Input.Number``."""
    annotation = tool.args.model_fields[name].annotation
    if get_origin(annotation) in (Union, UnionType):
        kinds = tuple(k for k in get_args(annotation) if k is not NoneType)
    else:
        kinds = (annotation,)
    # A bounded number (``tools.schema.Amount``) arrives as ``Annotated[Decimal, ...]`` inside
    # an optional: its base type is what the form shows.
    bases = tuple(get_args(k)[0] if get_origin(k) is Annotated else k for k in kinds)
    return bool(bases) and all(k in (int, float, Decimal) for k in bases)


def _shown(value: object) -> str:
    return "" if value is None else str(value)


def _form(
    record: CardRecord,
    tool: Tool,
    token: str,
    *,
    values: Mapping[str, str] | None = None,
    error: str | None = None,
) -> Json:
    """The form with the card's values (or what was typed), and the engine's refusal if any."""
    shown = values if values is not None else {n: _shown(record.args.get(n)) for n in tool.editable}
    fields = [EditField(n, shown.get(n, ""), _numeric(tool, n)) for n in tool.editable]
    return edit_form(
        card_id=record.card_id,
        token=token,
        summary=record.summary,
        fields=fields,
        error=error,
        error_field=_field_of(error, tool) if error else None,
    )


def _field_of(error: str, tool: Tool) -> str:
    """The field an error is about: the one whose name it mentions, else the first."""
    said = error.lower()
    named = (n for n in tool.editable if n.replace("_", " ") in said)
    return next(named, tool.editable[0])


def _changes(tool: Tool, values: Mapping[str, str]) -> dict[str, Any]:
    """The typed values by argument; an emptied field means "none" where the tool allows it
    (a refund with no amount refunds all that is left), else an empty text."""
    changes: dict[str, Any] = {}
    for name in tool.editable:
        value = values.get(name, "")
        field = tool.args.model_fields[name]
        changes[name] = None if not value and field.default is None else value
    return changes


async def _card_and_caller(
    services: Services, adapter: TeamsAdapter, presser: identity.Once | None, card_id: str
) -> tuple[CardRecord, TeamsPlacement, Tool, Caller] | Json:
    """The card shown here, its editable tool and the presser; else the card to answer with."""
    found = await visible(services, adapter, card_id)
    if found is None:
        return notice_card(GONE_HERE)
    record, placement = found
    tool = await services.registry.card_tool(record.tenantid, record.tool)
    if tool is None or not tool.editable or presser is None:
        return decided_card(one(record), placement)
    caller = await presser.caller()
    if isinstance(caller, str):
        return decided_card(
            one(record), placement, notice=identity.tell_unresolved(adapter, caller)
        )
    return record, placement, tool, caller


def _not_yours(record: CardRecord, placement: TeamsPlacement, adapter: TeamsAdapter) -> Json:
    log.info("edit_refused", card_id=record.card_id, why="not_your_card")
    return decided_card(one(record), placement, notice=adapter.words.not_your_card(placement.owner))


async def open_form(services: Services, context: TurnContext, data: object) -> Json:
    """The form for the card's values, or the refusal a press by someone else gets.

    A courtesy only: the engine checks the card and the presser again on "Make new card".
    """
    adapter = await teams_adapter(services, context, who(context.activity))
    found = await _card_and_caller(services, adapter, caller_of(context), _text(data, "card"))
    if not isinstance(found, tuple):
        return found
    record, placement, tool, caller = found
    if not record.issued_to_person(caller.userid, caller.tenantid):
        return _not_yours(record, placement, adapter)
    return _form(record, tool, _text(data, "token"))


async def save(services: Services, context: TurnContext, data: object) -> Json:
    """Proposes the card again with the typed values; the form again when the engine refuses."""
    card, _ = await _save(services, context, data)
    return card


async def _save(services: Services, context: TurnContext, data: object) -> tuple[Json, bool]:
    """The card to answer with, and whether a new card was made."""
    sender = who(context.activity)
    adapter = await teams_adapter(services, context, sender)
    found = await _card_and_caller(services, adapter, caller_of(context), _text(data, "card"))
    if not isinstance(found, tuple):
        return found, False
    record, placement, tool, caller = found
    token = _text(data, "token")
    values = typed(tool.editable, data if isinstance(data, Mapping) else {})
    try:
        result = await services.registry.edit(services.agent, token, caller, _changes(tool, values))
    except NotYourCardError:
        return _not_yours(record, placement, adapter), False
    except CountersignError as refused:
        log.info("edit_refused", card_id=record.card_id, why=type(refused).__name__)
        fresh = await services.registry.card(record.card_id) or record
        if fresh.status is CardStatus.PENDING:
            return _form(record, tool, token, values=values, error=str(refused)), False
        return await _ended(services, adapter, fresh, placement, refused), False
    assert result.proposal is not None, "an accepted edit is a new proposal"
    posted = await _posted(
        services, context, result.proposal, record=record, placement=placement, caller=caller
    )
    return posted, True


async def _ended(
    services: Services,
    adapter: TeamsAdapter,
    record: CardRecord,
    placement: TeamsPlacement,
    refused: CountersignError,
) -> Json:
    """The card as it stands, with why it could not be edited, once it is no longer waiting.

    A card that ran out of time while its form was open is shown expired on every copy, as a
    press on it would: a form asking for values nobody can use any more helps no one.
    """
    if isinstance(refused, CardExpiredError):
        await show(services, adapter, one(record))
    return decided_card(one(record), placement, notice=adapter.words.refused(str(refused)))


async def _posted(
    services: Services,
    context: TurnContext,
    proposal: Proposal,
    *,
    record: CardRecord,
    placement: TeamsPlacement,
    caller: Caller,
) -> Json:
    """Posts the new card where the old one was asked; the presser's copy as it now stands."""
    sender = who(context.activity)
    old = first(record, Platform.TEAMS)
    poster = await teams_adapter(services, context, sender, post_to=_where(Outbound(context), old))
    await turns.post_edited(
        services,
        poster,
        proposal,
        caller=caller,
        conversation=old.conversation if old is not None else None,
        installation=sender.tenant if sender is not None else "",
    )
    # The presser's copy, as ``post_edited`` just showed it: replaced, no buttons.
    shown = poster.answer_card(viewer=caller)
    if shown is None:
        fresh = await services.registry.card(record.card_id)
        shown = decided_card(one(fresh or record), placement)
    return shown


def _where(out: Outbound, old: object) -> str | None:
    """Where the new card goes: the old card's conversation when this turn reaches it, else here."""
    if not isinstance(old, TeamsPlacement) or not old.conversation_id:
        return None
    here = old.conversation_id == out.conversation_id
    return old.conversation_id if here or out.reaches(old.service_url) else None


def _invoke(card: Json) -> AdaptiveCardInvokeResponse:
    return AdaptiveCardInvokeResponse(status_code=HTTPStatus.OK, type=CARD_TYPE, value=card)


def register(application: AgentApplication[TurnState], services: Services) -> None:
    """Adds Edit, "Make new card" and Cancel, and their Action.Submit fallbacks."""

    async def on_edit(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke(await open_form(services, context, data))

    async def on_save(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke(await save(services, context, data))

    async def on_cancel(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke(await refresh(services, context, data))

    async def on_edit_submit(context: TurnContext, state: TurnState, data: object) -> None:
        await _send(context, await open_form(services, context, data))

    async def on_save_submit(context: TurnContext, state: TurnState, data: object) -> None:
        card, made = await _save(services, context, data)
        if not made:  # the form with the refusal, or the refusal; a new card speaks for itself
            await _send(context, card)

    async def on_cancel_submit(context: TurnContext, state: TurnState, data: object) -> None:
        return None  # the card, unchanged in the conversation, is still there to press

    cards = application.adaptive_card
    cards.action_execute(VERB_EDIT)(on_edit)
    cards.action_execute(VERB_EDIT_SAVE)(on_save)
    cards.action_execute(VERB_EDIT_CANCEL)(on_cancel)
    cards.action_submit(VERB_EDIT)(on_edit_submit)
    cards.action_submit(VERB_EDIT_SAVE)(on_save_submit)
    cards.action_submit(VERB_EDIT_CANCEL)(on_cancel_submit)


async def _send(context: TurnContext, card: Json) -> None:
    """An older client's answer: the card as a message in the conversation."""
    await context.send_activity(card_activity(card, EDIT_TITLE))
