"""Handles card presses in Teams: Approve, Reject and refresh; never runs a write except through ``Registry.approve``.

Approve and Reject arrive as ``Action.Execute`` invokes (``adaptiveCard/action``) and are
answered with the card the presser should now see; the message itself is updated for everyone.
Older clients send the same data as an ``Action.Submit`` message, answered in the conversation.
A refresh (Teams asks for it when the issuee opens the card) returns the buttons to the issuee
and the status to anyone else. Nothing here reads the token: the engine verifies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Literal

import structlog
from microsoft_agents.activity import AdaptiveCardInvokeResponse
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot.cardspec import of_record
from bot.surface import Surface
from bot.teams import texts
from bot.teams.adaptive import (
    CARD_TYPE,
    REASON_INPUT,
    VERB_APPROVE,
    VERB_REFRESH,
    VERB_REJECT,
    notice_card,
    render,
)
from bot.teams.identity import resolve
from bot.teams.posting import decided_card, say, show_decision
from tools import CardRecord, Decision
from tools.errors import CardExpiredError, CountersignError, NotYourCardError

__all__ = ["Answer", "decide", "refresh", "register"]

log = structlog.get_logger("bot.teams.actions")
Json = dict[str, Any]
Verb = Literal["approve", "reject"]


@dataclass(frozen=True, slots=True)
class Answer:
    """The card the presser sees now, and the refusal or note shown on it (if any)."""

    card: Json
    notice: str | None = None


def _text(data: object, key: str) -> str:
    value = data.get(key) if isinstance(data, Mapping) else None
    return str(value) if value is not None else ""


async def _visible(surface: Surface, context: TurnContext, card_id: str) -> CardRecord | None:
    """The card, if it was posted in the conversation the press came from.

    Everyone in that conversation can already read it; a card id pasted from elsewhere shows
    nothing of another conversation's (or another merchant's) card.
    """
    record = await surface.registry.card(card_id) if card_id else None
    conversation = context.activity.conversation
    if record is None or conversation is None:
        return None
    return record if (record.surface or {}).get("conversation_id") == conversation.id else None


def _refusal(record: CardRecord | None, notice: str) -> Answer:
    card = decided_card(record, notice=notice) if record else notice_card(notice)
    return Answer(card, notice)


async def decide(surface: Surface, context: TurnContext, data: object, verb: Verb) -> Answer:
    """Approve or reject as the presser; everyone's card is updated only when a decision happened."""
    token, card_id = _text(data, "token"), _text(data, "card")
    record = await _visible(surface, context, card_id)
    caller = await resolve(surface.directory, context)
    if caller is None:
        return _refusal(record, texts.not_linked())
    bound = log.bind(tenant=caller.tenantid, user=caller.userid, card_id=card_id)
    try:
        if verb == VERB_APPROVE:
            decision: Decision = await surface.registry.approve(surface.agent, token, caller)
        else:
            reason = _text(data, REASON_INPUT)
            decision = await surface.registry.reject(surface.agent, token, caller, reason)
    except NotYourCardError:
        owner = str((record.surface or {}).get("issued_to") or "") if record else ""
        bound.info("press_refused", why="not_your_card")
        return _refusal(record, texts.not_your_card(owner or None))
    except CardExpiredError as expired:
        bound.info("press_refused", why="expired")
        latest = await _visible(surface, context, expired.card_id or card_id)
        if latest is None:
            return _refusal(None, texts.refused(str(expired)))
        return Answer(await show_decision(surface, context, latest), texts.refused(str(expired)))
    except CountersignError as refused:
        bound.info("press_refused", why=type(refused).__name__)
        return _refusal(await _visible(surface, context, card_id), texts.refused(str(refused)))
    bound.info("card_decided", status=str(decision.card.status))
    return Answer(await show_decision(surface, context, decision.card))


async def refresh(surface: Surface, context: TurnContext, data: object) -> Json:
    """The card as this person should see it: buttons for the issuee while pending, else status."""
    record = await _visible(surface, context, _text(data, "card"))
    if record is None:
        return notice_card("This approval card is no longer available here.")
    caller = await resolve(surface.directory, context)
    mine = caller is not None and (caller.userid, caller.tenantid) == (
        record.userid,
        record.tenantid,
    )
    where = record.surface or {}
    spec = of_record(
        record,
        token=str(where.get("token") or ""),
        issued_to=where.get("issued_to"),
        now=surface.registry.clock(),
    )
    return render(spec, view="issuee" if mine else "everyone", issuee=where.get("user"))


def _invoke(card: Json) -> AdaptiveCardInvokeResponse:
    return AdaptiveCardInvokeResponse(status_code=HTTPStatus.OK, type=CARD_TYPE, value=card)


def register(application: AgentApplication[TurnState], surface: Surface) -> None:
    """Adds the Action.Execute verbs and their Action.Submit fallbacks."""

    async def on_approve(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke((await decide(surface, context, data, "approve")).card)

    async def on_reject(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke((await decide(surface, context, data, "reject")).card)

    async def on_refresh(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke(await refresh(surface, context, data))

    async def on_submit_approve(context: TurnContext, state: TurnState, data: object) -> None:
        await _submitted(surface, context, data, "approve")

    async def on_submit_reject(context: TurnContext, state: TurnState, data: object) -> None:
        await _submitted(surface, context, data, "reject")

    cards = application.adaptive_card
    cards.action_execute(VERB_APPROVE)(on_approve)
    cards.action_execute(VERB_REJECT)(on_reject)
    cards.action_execute(VERB_REFRESH)(on_refresh)
    cards.action_submit(VERB_APPROVE)(on_submit_approve)
    cards.action_submit(VERB_REJECT)(on_submit_reject)


async def _submitted(surface: Surface, context: TurnContext, data: object, verb: Verb) -> None:
    """An older client's press: the card is updated as usual; a refusal is said in the conversation."""
    answer = await decide(surface, context, data, verb)
    if answer.notice:
        await say(context, answer.notice)
