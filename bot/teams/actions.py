"""Takes card presses in Teams: Approve, Reject, Withdraw and refresh; never runs a write except through the core's ``bot.presses.ladder``.

Approve, Reject and Withdraw arrive as ``Action.Execute`` invokes (``adaptiveCard/action``) and
are answered with the card the presser should now see; every copy of the card is updated for
everyone. Older clients send the same data as an ``Action.Submit`` message, answered in the
conversation. A refresh (Teams asks for it when someone in ``refresh.userIds`` opens the card)
returns Approve and Reject (and Edit, handled in ``bot.teams.editing``) to a person it is
issued to who has not approved it yet, Withdraw to its asker, and the status to anyone else. Nothing here reads the token: the engine verifies
it, and refuses a press by anyone the buttons were not for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

import structlog
from microsoft_agents.activity import AdaptiveCardInvokeResponse
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState

from bot import presses
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import TeamsPlacement, placements_of
from bot.services import Services
from bot.teams.adapter import TeamsAdapter, teams_adapter
from bot.teams.adaptive import (
    CARD_TYPE,
    REASON_INPUT,
    VERB_APPROVE,
    VERB_REFRESH,
    VERB_REJECT,
    VERB_WITHDRAW,
    notice_card,
    render,
)
from bot.teams.caller import caller_of
from bot.teams.copy_view import decided_card, view_of
from bot.teams.identity import who
from tools import CardRecord

__all__ = ["PressAnswer", "decide", "refresh", "register", "visible"]

log = structlog.get_logger("bot.teams.actions")
Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class PressAnswer:
    """The card the presser sees now, and the refusal or note they were told (if any)."""

    card: Json
    notice: str | None = None


def _text(data: object, key: str) -> str:
    value = data.get(key) if isinstance(data, Mapping) else None
    return str(value) if value is not None else ""


async def visible(
    services: Services, adapter: TeamsAdapter, card_id: str
) -> tuple[CardRecord, TeamsPlacement] | None:
    """The card and its copy in the conversation the press came from, if it was posted there.

    Everyone in that conversation can already read it; a card id pasted from elsewhere shows
    nothing of another conversation's (or another merchant's) card.
    """
    record = await services.registry.card(card_id) if card_id else None
    placement = adapter.here(placements_of(record))
    if record is None or not isinstance(placement, TeamsPlacement):
        return None
    return record, placement


async def decide(
    services: Services, context: TurnContext, data: object, verb: presses.Verdict
) -> PressAnswer:
    """Approve, reject or withdraw as the presser; every copy is updated only when something changed."""
    sender = who(context.activity)
    adapter = await teams_adapter(services, context, sender)
    press = presses.Press(
        installation=sender.tenant if sender else "",
        user=sender.aad if sender else "",
        token=_text(data, "token"),
        verb=verb,
        card_id=_text(data, "card") or None,
        reason=_text(data, REASON_INPUT),
    )
    ended = await presses.decide(services, adapter, press, caller_of(context))
    # A refused press may redraw the card too (a decision never shown): its answer still says
    # why it was refused, or the presser reads a done card with no word that theirs lost.
    shown = adapter.answer_card(
        with_notice=ended.outcome in ("failed", "refused"), viewer=ended.caller
    )
    if shown is not None:
        return PressAnswer(shown, adapter.notice)
    notice = adapter.notice or ""
    return PressAnswer(await _refusal_card(services, adapter, ended.card_id or "", notice), notice)


async def _here(
    services: Services, adapter: TeamsAdapter, card_id: str
) -> tuple[Card, TeamsPlacement] | None:
    """The card (of one write or several) and its copy in this conversation, if posted here."""
    card = await cards.load(services.registry, card_id)
    placement = adapter.here(card.placements if card is not None else ())
    if card is None or not isinstance(placement, TeamsPlacement):
        return None
    return card, placement


async def _refusal_card(
    services: Services, adapter: TeamsAdapter, card_id: str, notice: str
) -> Json:
    """The card as it stands with the refusal on it, or the refusal alone when it is not here."""
    try:
        found = await _here(services, adapter, card_id)
    except presses.DATABASE_DOWN:
        found = None  # the presser is already told the database is unreachable
    if found is None:
        return notice_card(notice)
    card, placement = found
    return decided_card(card, placement, notice=notice)


async def refresh(services: Services, context: TurnContext, data: object) -> Json:
    """The card as this person should see it: buttons for the issuee while pending, else status."""
    adapter = await teams_adapter(services, context, who(context.activity))
    found = await _here(services, adapter, _text(data, "card"))
    if found is None:
        return notice_card("This approval card is no longer available here.")
    card, placement = found
    viewer = caller_of(context)
    resolved = await viewer.caller() if viewer is not None else None
    caller = None if isinstance(resolved, str) else resolved
    spec = card.spec(
        token=placement.token, issued_to=placement.issued_to, now=services.registry.now()
    )
    return render(spec, view=view_of(card, caller), issuee=placement.user)


def _invoke(card: Json) -> AdaptiveCardInvokeResponse:
    return AdaptiveCardInvokeResponse(status_code=HTTPStatus.OK, type=CARD_TYPE, value=card)


Execute = Callable[[TurnContext, TurnState, object], Awaitable[AdaptiveCardInvokeResponse]]
Submit = Callable[[TurnContext, TurnState, object], Awaitable[None]]
# The verbs a person presses; each also has its Action.Submit fallback.
PRESSED: Final[tuple[presses.Verdict, ...]] = (VERB_APPROVE, VERB_REJECT, VERB_WITHDRAW)


def _handlers(services: Services, verb: presses.Verdict) -> tuple[Execute, Submit]:
    async def on_execute(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke((await decide(services, context, data, verb)).card)

    async def on_submit(context: TurnContext, state: TurnState, data: object) -> None:
        await _submitted(services, context, data, verb)

    return on_execute, on_submit


def register(application: AgentApplication[TurnState], services: Services) -> None:
    """Adds the Action.Execute verbs and their Action.Submit fallbacks."""

    async def on_refresh(
        context: TurnContext, state: TurnState, data: object
    ) -> AdaptiveCardInvokeResponse:
        return _invoke(await refresh(services, context, data))

    cards = application.adaptive_card
    cards.action_execute(VERB_REFRESH)(on_refresh)
    for verb in PRESSED:
        on_execute, on_submit = _handlers(services, verb)
        cards.action_execute(verb)(on_execute)
        cards.action_submit(verb)(on_submit)


async def _submitted(
    services: Services, context: TurnContext, data: object, verb: presses.Verdict
) -> None:
    """An older client's press: the card is updated as usual; a refusal is said in the conversation."""
    answer = await decide(services, context, data, verb)
    if answer.notice:
        await (await teams_adapter(services, context, None)).post(answer.notice)
