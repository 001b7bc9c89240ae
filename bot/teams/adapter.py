"""Teams as the core's ``Adapter``: activities sent through one turn's context; never decides anything.

A card is posted as the status everyone sees, with a refresh that gives its issuee the buttons;
a decision updates the message for everyone (``PUT …/activities/{id}``) and posts the audit reply
the conversation sees. An invoke (a card press) is answered in the HTTP response with the card
the presser should now see, so what the core tells the presser privately is kept here and put
on that card (``answer_card``) instead of being sent as a message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiohttp
import structlog
from microsoft_agents.activity import Activity, ActivityTypes, Attachment, TextFormatTypes
from microsoft_agents.hosting.core import TurnContext

from bot import wording
from bot.adapter import Form, Words
from bot.cardspec import clip, of_proposal, of_record
from bot.placement import Placement, Platform, TeamsPlacement
from bot.teams import texts
from bot.teams.adaptive import CARD_TYPE, render
from bot.teams.identity import Who, member_email
from tools import Caller, CardRecord, Proposal

__all__ = ["TeamsAdapter", "card_activity", "conversation_key", "decided_card"]

log = structlog.get_logger("bot.teams.adapter")
Json = dict[str, Any]


def conversation_key(conversation_id: str, tenant: str) -> str:
    """One model conversation per Teams chat or channel reply chain (its id carries ``;messageid=``)."""
    return f"teams:{tenant}:{conversation_id}"


def card_activity(card: Json, summary: str, *, activity_id: str | None = None) -> Activity:
    """A message carrying one Adaptive Card; ``summary`` is the notification's text."""
    return Activity(
        type=ActivityTypes.message,
        id=activity_id,
        summary=clip(summary, 250),
        attachments=[Attachment(content_type=CARD_TYPE, content=card)],
    )


def decided_card(
    record: CardRecord, placement: TeamsPlacement | None, *, notice: str | None = None
) -> Json:
    """The card as everyone sees it now (decided, expired or still pending)."""
    token = placement.token if placement else ""
    issued_to = placement.issued_to if placement else None
    spec = of_record(record, token=token, issued_to=issued_to)
    return render(
        spec, view="everyone", issuee=placement.user if placement else None, notice=notice
    )


class TeamsAdapter:
    """The core's ``Adapter`` over one turn's context; ``sender`` is who the request came from."""

    def __init__(self, context: TurnContext, sender: Who | None) -> None:
        self.context, self.sender = context, sender
        # What an invoke answers with: the card as shown by the last update, and the words the
        # presser was told (put on the card they see).
        self.shown: tuple[CardRecord, TeamsPlacement] | None = None
        self.notice: str | None = None

    @property
    def platform(self) -> Platform:
        return "teams"

    @property
    def words(self) -> Words:
        return texts

    @property
    def conversation_id(self) -> str:
        conversation = self.context.activity.conversation
        return str(conversation.id) if conversation is not None else ""

    async def verified_email(self, user: str) -> str | None:
        if self.sender is None or self.sender.aad != user:
            return None
        return await member_email(self.context, self.sender)

    async def post(self, text: str) -> None:
        """A plain-text message in the conversation (Teams reads no markdown in it)."""
        await self.context.send_activity(
            Activity(type=ActivityTypes.message, text=text, text_format=TextFormatTypes.plain)
        )

    async def post_card(
        self, proposal: Proposal, *, caller: Caller, conversation: str
    ) -> Placement:
        assert self.sender is not None, "a card is posted only for a resolved sender"
        spec = of_proposal(proposal, issued_to=caller.name or self.sender.name)
        card = render(spec, view="everyone", issuee=self.sender.address)
        response = await self.context.send_activity(card_activity(card, spec.notification))
        return TeamsPlacement(
            tenant=self.sender.tenant,
            service_url=self.context.activity.service_url,
            conversation_id=self.conversation_id or None,
            activity_id=response.id if response else None,
            user=self.sender.address,
            aad=self.sender.aad,
            issued_to=spec.issued_to,
            conversation=conversation,
            token=proposal.card,
        )

    async def update(self, record: CardRecord, placement: Placement) -> Placement | None:
        assert isinstance(placement, TeamsPlacement)
        self.shown = (record, placement)
        if not placement.activity_id or placement.conversation_id != self.conversation_id:
            # Only a copy in this turn's conversation can be updated through its context.
            return None
        card = decided_card(record, placement)
        text = wording.decided_text(
            str(record.status), record.summary, record.decided_by_name or ""
        )
        try:
            await self.context.update_activity(
                card_activity(card, text, activity_id=placement.activity_id)
            )
        except aiohttp.ClientError as failed:
            log.error("card_update_failed", card_id=record.card_id, error=type(failed).__name__)
            return None
        log.info(
            "card_updated",
            tenant=record.tenantid,
            user=record.decided_by,
            card_id=record.card_id,
            status=str(record.status),
        )
        return None

    async def post_audit(
        self, record: CardRecord, placement: Placement, *, audit_channel: str | None = None
    ) -> None:
        # A Teams audit channel would need a proactive conversation (as ``notify`` does); the
        # record goes where the card is, which every member of that conversation sees.
        text = texts.audit_text(
            str(record.status),
            summary=record.summary,
            by=record.decided_by_name or "",
            reason=record.reason,
            outcome=record.outcome,
        )
        try:
            await self.post(text)
        except aiohttp.ClientError as failed:
            log.error("audit_post_failed", card_id=record.card_id, error=type(failed).__name__)
            return
        log.info(
            "audit_posted", tenant=record.tenantid, user=record.decided_by, card_id=record.card_id
        )

    async def post_privately(self, text: str) -> None:
        """Kept for the invoke's answer: only the presser sees the card it is put on."""
        self.notice = text

    async def notify(self, user: str, text: str) -> None:
        # A 1:1 chat must first be created through the connector; routing cards to managers
        # adds that. Until then nothing calls this for Teams.
        raise NotImplementedError("Teams cannot message a person outside this conversation yet")

    async def send_copy(
        self, record: CardRecord, user: str, *, token: str, push: str
    ) -> Placement | None:
        raise NotImplementedError("private copies of a card are not sent here yet")

    async def typing(self, *, on: bool) -> None:
        """One typing activity when work starts; Teams clears it by itself."""
        if on:
            await self.context.send_activity(Activity(type=ActivityTypes.typing))

    async def open_form(self, form: Form) -> None:
        # A Teams card asks for its reject reason inline (an input beside the buttons).
        raise NotImplementedError("Teams cards carry their own inputs; there is no form to open")

    def here(self, placements: Sequence[Placement]) -> Placement | None:
        """The card's copy in this conversation; a card id pasted from elsewhere shows nothing."""
        return next(
            (
                p
                for p in placements
                if isinstance(p, TeamsPlacement) and p.conversation_id == self.conversation_id
            ),
            None,
        )

    def answer_card(self, *, with_notice: bool = False) -> Json | None:
        """The card last shown by ``update`` (with the notice when asked), or None."""
        if self.shown is None:
            return None
        record, placement = self.shown
        return decided_card(record, placement, notice=self.notice if with_notice else None)
