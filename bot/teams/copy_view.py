"""What a Teams copy of a card shows, and the activity that carries it; never sends anything.

A card is posted as the status everyone sees, with a refresh that gives each reader their own
view; a private copy (a 1:1 chat) shows its one reader the buttons while the card waits. The
adapter, the press and edit handlers and the refresh all draw a copy through ``decided_card``
so that each shows the same card for the same state.
"""

from __future__ import annotations

from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, Attachment, TextFormatTypes

from bot.cards import wording
from bot.cards.card import Card
from bot.cards.cardspec import clip
from bot.placement import TeamsPlacement
from bot.teams.adaptive import CARD_TYPE, View, render
from tools import Caller, CardStatus

__all__ = ["card_activity", "decided_card", "is_private", "notification", "plain", "view_of"]

Json = dict[str, Any]


def card_activity(card: Json, summary: str, *, activity_id: str | None = None) -> Activity:
    """A message carrying one Adaptive Card; ``summary`` is the notification's text."""
    return Activity(
        type=ActivityTypes.message,
        id=activity_id,
        summary=clip(summary, 250),
        attachments=[Attachment(content_type=CARD_TYPE, content=card)],
    )


def plain(text: str) -> Activity:
    """A plain-text message (Teams reads no markdown in it)."""
    return Activity(type=ActivityTypes.message, text=text, text_format=TextFormatTypes.plain)


def notification(card: Card) -> str:
    """What a changed card says in a notification: still waiting (and for whom), or decided."""
    record = card.single
    if record is None:
        return card.spec().notification
    if record.status is CardStatus.PENDING:
        waiting = wording.who(tuple(i.name for i in record.waiting_for))
        return wording.card_text(record.summary, waiting or "You")
    by = record.decided_by_name or ""
    return wording.decided_text(str(record.status), record.summary, by, record.standing)


def is_private(placement: TeamsPlacement) -> bool:
    """A copy sent to one person in a 1:1 chat: no model conversation, only its reader."""
    return placement.conversation is None and placement.aad is not None


def view_of(card: Card, caller: Caller | None) -> View:
    """What ``caller`` may still do with the card: decide it, withdraw it (its asker), or watch."""
    lead = card.lead  # a card of several: its first waiting write's people decide them all
    if caller is None or lead.status is not CardStatus.PENDING:
        return "everyone"
    if lead.issued_to_person(caller.userid, caller.tenantid) and not lead.approved_by(
        caller.userid
    ):
        return "issuee"
    if (card.userid, card.tenantid) == (caller.userid, caller.tenantid):
        return "asker"
    return "everyone"


def decided_card(
    card: Card,
    placement: TeamsPlacement | None,
    *,
    notice: str | None = None,
    view: View | None = None,
) -> Json:
    """The card as a copy shows it now (decided, expired or still pending).

    A private copy shows its one reader their buttons while the card waits; a shared one shows
    the status, and its refresh gives each reader their own view.
    """
    token = placement.token if placement else ""
    issued_to = placement.issued_to if placement else None
    spec = card.spec(token=token, issued_to=issued_to)
    if view is None:
        # A private copy's one reader decides it, unless they gave its first of two approvals.
        mine = placement is not None and is_private(placement)
        done = placement is not None and placement.approved_by_reader(*card.live)
        view = "issuee" if mine and not done else "everyone"
    return render(spec, view=view, issuee=placement.user if placement else None, notice=notice)
