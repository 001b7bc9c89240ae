"""Teams as the core's ``Adapter``: activities sent through one turn's context; never decides anything.

A card is posted as the status everyone sees, with a refresh that gives its asker their own
view (``bot.teams.copy_view`` draws each copy); each person it is issued to gets a private copy,
with the buttons, in a 1:1 chat with the bot (``bot.teams.personal``). A change updates every
copy it can reach (``PUT …/activities/{id}``) and posts the audit reply where the card was
asked. An invoke (a card press) is answered in the HTTP response with the card the presser
should now see, so what the core tells the presser privately is kept here and put on that card
(``answer_card``) instead of being sent as a message.

In a 1:1 chat an answer is streamed (``bot.teams.stream``): the step the agent is on, then its
words as written, ended by the reply people keep. Elsewhere Teams cannot stream, and the answer
is posted whole, as one message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

import structlog
from microsoft_agents.activity import Activity, ActivityTypes
from microsoft_agents.hosting.core import TurnContext
from sqlalchemy.exc import SQLAlchemyError

from bot.adapter import Form, Home, Listing, Step, Words
from bot.cards import several, wording
from bot.cards.card import Card, Fresh
from bot.cards.consent import ConsentCard
from bot.placement import ListPlacement, Placement, Platform, TeamsPlacement
from bot.services import Services
from bot.teams import consent_card, personal, texts
from bot.teams.adaptive import render
from bot.teams.copy_view import card_activity, decided_card, notification, plain, view_of
from bot.teams.identity import Profile, Who, member_by_email, member_profile
from bot.teams.outbound import FAILURES, Outbound
from bot.teams.stream import INTERVAL, TeamsStream
from tools import Caller, find_times, in_zone

__all__ = ["TeamsAdapter", "teams_adapter"]

log = structlog.get_logger("bot.teams.adapter")
Json = dict[str, Any]


class TeamsAdapter:
    """The core's ``Adapter`` over one turn's context; ``sender`` is who the request came from."""

    def __init__(
        self,
        context: TurnContext,
        sender: Who | None,
        *,
        post_to: str | None = None,
        zone: Callable[[], Awaitable[str]] | None = None,
        stream_interval: float = INTERVAL,
    ) -> None:
        self.context, self.sender = context, sender
        # The merchant's zone: a plain-text message shows no reader their own (Teams expands
        # DATE and TIME in a card's text only), and "2026-12-01 20:19 UTC" meant nothing to a
        # shop in Bengaluru.
        # Looked up only for words that hold a time: a press while the database is down is
        # still told so, and most messages hold none.
        self._zone_of = zone
        self._zone: str | None = None
        self.out = Outbound(context)
        # Where posts go when not in the request's own conversation: a card edited from a 1:1
        # copy is posted anew where the old one was asked (reachable on this service URL).
        self.post_to = post_to or self.out.conversation_id
        # What an invoke answers with: the card as shown by the last update of the copy in this
        # conversation, and the words the presser was told (put on the card they see).
        self.shown: tuple[Card, TeamsPlacement] | None = None
        self.notice: str | None = None
        # Members the tenant's directory found by email (AAD object id → what it says of them),
        # so a manager who never wrote to the app is linked and reached like one who did; and
        # the sender as the directory has them, looked up once per turn.
        self._found: dict[str, Profile] = {}
        self._sender: dict[str, Profile | None] = {}
        # This turn's streamed answer (a 1:1 chat only), and the seconds between its updates.
        self._stream: TeamsStream | None = None
        self.stream_interval = stream_interval

    @property
    def platform(self) -> Platform:
        return Platform.TEAMS

    @property
    def words(self) -> Words:
        return texts

    @property
    def conversation_id(self) -> str:
        return self.out.conversation_id

    async def verified_email(self, user: str) -> str | None:
        profile = await self._profile(user)
        return profile.email if profile is not None else None

    async def home_of(self, user: str) -> Home | None:
        """The tenant the directory says the member is of, never the activity's: an external
        user in a chat of the merchant's tenant is in that tenant's conversation, not of it."""
        profile = await self._profile(user)
        return Home(profile.tenant) if profile is not None and profile.tenant else None

    async def _profile(self, user: str) -> Profile | None:
        """The directory's word on the sender, or on a member it found by email."""
        if user in self._found:
            return self._found[user]
        if self.sender is None or self.sender.aad != user:
            return None
        if user not in self._sender:
            self._sender[user] = await member_profile(self.context, self.sender)
        return self._sender[user]

    async def member_by_email(self, email: str) -> str | None:
        """The member of this tenant the directory gives ``email`` (their AAD object id).

        So a Teams card reaches approvers not linked beforehand (by writing to the app, or by
        `countersign link`): a manager who never was is not silently left out.
        """
        roster = self.sender.roster if self.sender is not None else self.conversation_id
        found = await member_by_email(self.context, roster, email)
        if found is None:
            return None
        self._found[found.aad] = found
        return found.aad

    async def _said(self, text: str) -> str:
        """Words as plain text shows them: each time in the merchant's zone, named."""
        if self._zone is None and any(isinstance(p, datetime) for p in find_times(text)):
            self._zone = "UTC" if self._zone_of is None else await self._zone_of()
        return in_zone(text, self._zone) if self._zone is not None else text

    async def post(self, text: str) -> str | None:
        """A plain-text message in the conversation (Teams reads no markdown in it); the
        message that ends a stream which showed only what the agent was doing."""
        text = await self._said(text)
        if await self._ended_with(text):
            return self._stream.message if self._stream is not None else None
        return await self.out.send(self.post_to, plain(text))

    async def edit_answer(self, placement: Placement, text: str) -> bool:
        """The answer above the copy, its words replaced in place (plain text, as posted)."""
        assert isinstance(placement, TeamsPlacement)
        where = placement.conversation_id
        if placement.reply is None or not where or not self._reaches(placement):
            return True  # nothing to edit, or no later try reaches it from here either
        edited = plain(await self._said(texts.reply(text)))
        edited.id = placement.reply
        try:
            await self.out.update(where, edited)
        except FAILURES as failed:
            log.warning("answer_edit_failed", conversation=where, error=type(failed).__name__)
            return False
        log.info("answer_edited", conversation=where)
        return True

    def stream(self) -> TeamsStream | None:
        """A streamed answer in a 1:1 chat; None elsewhere: Teams streams only there."""
        conversation = self.context.activity.conversation
        personal = conversation is not None and conversation.conversation_type == "personal"
        if not personal or self.post_to != self.conversation_id:
            return None
        self._stream = TeamsStream(self.context, interval=self.stream_interval)
        return self._stream

    def step(self, step: Step) -> None:
        """Shows the step the agent is on in the answer being streamed, if there is one."""
        if self._stream is not None:
            self._stream.inform(texts.step(step))

    async def end_stream(self) -> None:
        """Ends the turn's stream if nothing did (the turn posted nothing): Teams would show
        what the agent was doing until it gave up on the stream."""
        if self._stream is not None:
            await self._stream.close()
            await self._ended_with(texts.stream_ended())

    async def _ended_with(self, text: str) -> bool:
        return self._stream is not None and await self._stream.end(text)

    async def post_card(self, fresh: Fresh, *, caller: Caller, conversation: str) -> Placement:
        assert self.sender is not None, "a card is posted only for a resolved sender"
        # A card is never part of a stream: one still open is ended first, the card after it.
        await self._ended_with(texts.card_follows())
        spec = fresh.spec(issued_to=caller.name or self.sender.name)
        # The asker's client refreshes it: Approve and Reject for their own card, Withdraw
        # for one routed to others (who get private copies).
        card = render(spec, view="everyone", issuee=self.sender.address)
        sent = await self.out.send(self.post_to, card_activity(card, spec.notification))
        waiting = wording.who(spec.waiting_for) or spec.issued_to
        return TeamsPlacement(
            tenant=self.sender.tenant,
            service_url=self.context.activity.service_url,
            conversation_id=self.post_to or None,
            activity_id=sent,
            user=self.sender.address,
            aad=self.sender.aad,
            issued_to=waiting or caller.name or self.sender.name,
            conversation=conversation,
            token=fresh.token,
        )

    async def update(self, card: Card, placement: Placement) -> Placement | bool:
        assert isinstance(placement, TeamsPlacement)
        if placement.conversation_id == self.conversation_id:
            self.shown = (card, placement)
        where = placement.conversation_id
        if not placement.activity_id or not where or not self._reaches(placement):
            # No later try reaches it from here either.
            log.warning("card_copy_unreachable", card_id=card.card_id, conversation=where)
            return True
        shown = decided_card(card, placement)
        try:
            await self.out.update(
                where, card_activity(shown, notification(card), activity_id=placement.activity_id)
            )
        except FAILURES as failed:
            log.error("card_update_failed", card_id=card.card_id, error=type(failed).__name__)
            return False
        log.info(
            "card_updated",
            tenant=card.tenantid,
            user=card.lead.decided_by,
            card_id=card.card_id,
            status=str(card.lead.status),
        )
        return True

    async def update_list(self, where: ListPlacement, listing: Listing) -> bool:
        """Teams keeps no private lists: its "my cards" is an answer in words, dated by the
        chat, and every card in it has copies of its own that refresh."""
        log.warning("list_not_on_teams", user=where.user)
        return False

    async def post_audit(
        self, card: Card, placement: Placement, *, audit_channel: str | None = None
    ) -> bool:
        # The record goes where the card was asked, which every member there sees, even when
        # it was decided in someone's 1:1 chat. A Teams audit channel is not offered yet.
        assert isinstance(placement, TeamsPlacement)
        where = placement.conversation_id or self.conversation_id
        if not self._reaches(placement):
            log.warning("audit_unreachable", card_id=card.card_id, conversation=where)
            return True  # no later try reaches it from here either
        try:
            await self.out.send(where, plain(await self._said(_audit_text(card))))
        except FAILURES as failed:
            log.error("audit_post_failed", card_id=card.card_id, error=type(failed).__name__)
            return False
        log.info(
            "audit_posted", tenant=card.tenantid, user=card.lead.decided_by, card_id=card.card_id
        )
        return True

    async def post_privately(self, text: str) -> None:
        """Kept for the invoke's answer: only the presser sees the card it is put on."""
        self.notice = await self._said(text)

    async def notify(self, user: str, text: str) -> bool:
        """A plain message in the person's 1:1 chat with the bot (``user``: their AAD object id)."""
        return await personal.notify(self.out, user, await self._said(text), tenant=self._tenant())

    async def post_consent(self, user: str, card: ConsentCard) -> bool:
        """A consent card (``bot.cards.consent``) in the person's 1:1 chat with the bot."""
        return await consent_card.post_consent(self.out, user, card, tenant=self._tenant())

    async def send_copy(self, card: Card, user: str, *, token: str, push: str) -> Placement | None:
        """The card, with the buttons, in a 1:1 chat with the person (``user``: AAD object id)."""
        tenant = self._tenant()
        return await personal.send_copy(self.out, card, user, tenant=tenant, token=token, push=push)

    def _reaches(self, placement: TeamsPlacement) -> bool:
        """A copy in this conversation, or in another one on the service URL this turn uses."""
        here = placement.conversation_id in (None, self.conversation_id)
        return here or self.out.reaches(placement.service_url)

    def _tenant(self) -> str:
        if self.sender is not None:
            return self.sender.tenant
        conversation = self.context.activity.conversation
        return str(conversation.tenant_id or "") if conversation is not None else ""

    async def typing(self, *, on: bool) -> None:
        """One typing activity when work starts (Teams clears it by itself); with a stream,
        its first informative update instead (a plain typing activity is no part of it)."""
        if on and self._stream is not None:
            self._stream.inform(texts.THINKING, first=True)
        elif on:
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

    def answer_card(
        self, *, with_notice: bool = False, viewer: Caller | None = None
    ) -> Json | None:
        """The card last shown here by ``update``, as ``viewer`` may act on it, or None."""
        if self.shown is None:
            return None
        card, placement = self.shown
        return decided_card(
            card,
            placement,
            notice=self.notice if with_notice else None,
            view=view_of(card, viewer),
        )


def _audit_text(card: Card) -> str:
    """The decision's record: a card's own, or one for all the writes of a card of several."""
    record = card.single
    if record is None:
        by = next((c.decided_by_name for c in card.items if c.decided_by_name), "") or ""
        titles = [(str(c.status), c.summary, c.outcome) for c in card.items]
        mark = several.batch_mark([status for status, _, _ in titles])
        return texts.batch_audit_text(several.audit_text(by, titles), mark)
    return texts.audit_text(
        str(record.status),
        summary=record.summary,
        by=record.decided_by_name or "",
        reason=record.reason,
        outcome=record.outcome,
    )


async def teams_adapter(
    services: Services,
    context: TurnContext,
    sender: Who | None,
    *,
    post_to: str | None = None,
    tenant: str | None = None,
    stream_interval: float = INTERVAL,
) -> TeamsAdapter:
    """An adapter for this turn that words times in the zone of the merchant its tenant (the
    sender's, else ``tenant``, else the conversation's) is connected to."""
    conversation = context.activity.conversation
    found = sender.tenant if sender else tenant or (conversation.tenant_id if conversation else "")

    async def zone() -> str:
        if not found:
            return "UTC"
        try:
            return await services.directory.time_zone_of("teams", found)
        except (
            SQLAlchemyError,
            OSError,
            TimeoutError,
        ) as failed:  # the words still go out, in UTC, named
            log.warning("time_zone_unknown", error=type(failed).__name__)
            return "UTC"

    return TeamsAdapter(
        context, sender, post_to=post_to, zone=zone, stream_interval=stream_interval
    )
