"""Slack as the core's ``Adapter``, bound to one request or one card copy; never decides anything.

Built per request (bound to its workspace, channel, thread and person) or per card copy (to show
a card settled without a request). It answers where the request came from (the reply, a card, a
private word, the hourglass, a modal) and finds the people Slack vouches for; a card's copies,
updates and audit lines go out through ``bot.slack.outbound``. Every message goes out with
``parse="none"`` and no unfurls. Slack's errors on the way out are logged and swallowed only
where a missing side effect is better than a half-told story (a reaction, an update, an audit
line); posting the answer itself is never swallowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.adapter import Form, Home, Listing, Stream, Words
from bot.cards.card import Card, Fresh
from bot.cards.consent import ConsentCard
from bot.placement import ListPlacement, Placement, Platform, SlackPlacement
from bot.slack import consent_card, outbound, texts
from bot.slack.blocks import Block, reject_modal, rich_text
from bot.slack.cards import render
from bot.slack.lists import listed_message
from bot.slack.outbound import POST_OPTIONS, slack_error
from bot.slack.status import StatusLine
from bot.slack.streaming import SlackStream
from bot.slack.thumbs import feedback_block
from tools import Caller, Routing

__all__ = ["SlackAdapter", "Where"]

log = structlog.get_logger("bot.slack.adapter")


def _shown(text: str) -> list[Block] | None:
    """The blocks of a message whose words carry data: its lines, as typed (none for words
    that are ours alone, which mrkdwn shows), and under the model's answer its feedback."""
    if isinstance(text, texts.Said) and text.lines:
        room = 49 if text.answer else 50  # Slack's 50 blocks, the feedback's one among them
        lines = [rich_text([line], "said") for line in text.lines[:room]]
        return [*lines, feedback_block()] if text.answer else lines
    return None


def _vouched(found: dict[str, Any]) -> str | None:
    """The email Slack vouches for in a user object, or None.

    A bot, a deactivated account or an address Slack has not confirmed is never enough to see
    a shop. Absent counts as unconfirmed: a Slack Connect user's profile can lack the field
    while claiming any email, and that is how a stranger was linked as the owner.
    """
    confirmed = found.get("is_email_confirmed") is True
    if found.get("is_bot") or found.get("deleted") or not confirmed:
        return None
    email = (found.get("profile") or {}).get("email")
    return str(email) if email else None


def _is_dm(channel: str) -> bool:
    """Whether a channel is a DM with the app (Slack's ids of DMs begin with D)."""
    return channel.startswith("D")


@dataclass(frozen=True, slots=True)
class Where:
    """Where a request came from: installation, channel (None from the App Home), thread, who.

    ``ts`` is the message being answered (it gets the hourglass); ``trigger_id`` lets a press
    open a modal; ``user_team`` is the user's own workspace as the signed request states it
    (None when it does not, as in a slash command: then Slack is asked).
    """

    installation: str
    user: str
    channel: str | None = None
    thread_ts: str | None = None
    ts: str | None = None
    trigger_id: str | None = None
    user_team: str | None = None


class SlackAdapter:
    """The core's ``Adapter`` over one Web API client, bound to one request's ``Where``."""

    def __init__(
        self,
        client: AsyncWebClient,
        where: Where,
        *,
        audit_channel: str | None = None,
        status: StatusLine | None = None,
    ) -> None:
        self.client, self.where, self.audit_channel = client, where, audit_channel
        # An assistant thread's status line; the hourglass is for where there is none.
        self.status = status
        self._reacted = False
        # users.info answers by user id, read once per request: where the user belongs and
        # their verified email come from the same answer.
        self._users: dict[str, dict[str, Any]] = {}

    @property
    def platform(self) -> Platform:
        return Platform.SLACK

    @property
    def words(self) -> Words:
        return texts

    async def _user(self, user: str) -> dict[str, Any]:
        """The user object of ``users.info`` ({} when Slack would not say)."""
        if user not in self._users:
            try:
                response = await self.client.users_info(user=user)
            except SlackApiError as failed:
                log.warning("users_info_failed", slack_user=user, error=slack_error(failed))
                return {}
            self._users[user] = dict(response.get("user") or {})
        return self._users[user]

    async def verified_email(self, user: str) -> str | None:
        return _vouched(await self._user(user))

    async def home_of(self, user: str) -> Home | None:
        """The workspace Slack says the user is of (``team_id``) and, in an Enterprise Grid, its
        org and the org's workspaces the user is a member of (``enterprise_user``'s
        ``enterprise_id`` and ``teams``); a Slack Connect user's are their own."""
        found = await self._user(user)
        grid = found.get("enterprise_user") or {}
        team, org = found.get("team_id"), grid.get("enterprise_id")
        teams = tuple(str(t) for t in grid.get("teams") or () if t)
        return Home(str(team), str(org) if org else None, teams) if team else None

    async def member_by_email(self, email: str) -> str | None:
        try:
            response = await self.client.users_lookupByEmail(email=email)
        except SlackApiError as failed:
            log.info("member_not_found", error=slack_error(failed))
            return None
        found: dict[str, Any] = response.get("user") or {}
        vouched = _vouched(found)
        if vouched is None or vouched.lower() != email.lower() or not found.get("id"):
            return None
        self._users[str(found["id"])] = found
        return str(found["id"])

    async def post(self, text: str) -> str | None:
        response = await self.client.chat_postMessage(
            channel=self.where.channel or self.where.user,
            thread_ts=self.where.thread_ts,
            text=text,
            blocks=_shown(text),
            **POST_OPTIONS,
        )
        return str(response["ts"]) if response.get("ts") else None

    async def edit_answer(self, placement: Placement, text: str) -> bool:
        """The answer above the copy, its words replaced (shown as typed, as when posted)."""
        assert isinstance(placement, SlackPlacement)
        if placement.reply is None:
            return True
        said = texts.reply(text)
        return await outbound.edit_message(
            self.client, placement.channel, placement.reply, text=said, blocks=_shown(said)
        )

    def stream(self) -> Stream | None:
        """A stream into the thread the request came from (an assistant thread, a mention's
        thread), for its sender; none at a DM's top level, where the answer is posted whole."""
        where = self.where
        if not (where.channel and where.thread_ts):
            return None
        return SlackStream(
            self.client,
            channel=where.channel,
            thread_ts=where.thread_ts,
            recipient_user=where.user,
            recipient_team=where.user_team or where.installation,
            blocks=lambda: [feedback_block()],
        )

    async def post_card(self, fresh: Fresh, *, caller: Caller, conversation: str) -> Placement:
        channel = self.where.channel or self.where.user
        spec = fresh.spec(issued_to=caller.name or None)
        response = await self.client.chat_postMessage(
            channel=channel,
            thread_ts=self.where.thread_ts,
            text=texts.notification(spec.notification),
            blocks=render(
                spec, for_user=self.where.user, reader_approves=self._reader_approves(fresh, caller)
            ),
            **POST_OPTIONS,
        )
        return SlackPlacement(
            team=self.where.installation,
            # Posted to a person (their DM with the app, a card asked for at /mcp), Slack
            # answers with the DM's channel id, which is what updating the card needs.
            channel=str(response.get("channel") or channel),
            thread_ts=self.where.thread_ts,
            user=self._owner(fresh.routing, caller),
            conversation=conversation,
            ts=str(response["ts"]),
            token=fresh.token,
            # A card asked for in one's DM with the app is read by its asker alone: after their
            # first of two approvals it kept Approve, and pressing it was only refused.
            person=caller.userid if _is_dm(channel) else None,
        )

    def _reader_approves(self, fresh: Fresh, caller: Caller) -> bool:
        """Whether the card is posted in its asker's DM with the app, read by them alone, and
        they may approve it (its Approve then opens their dialog)."""
        if not _is_dm(self.where.channel or self.where.user):
            return False
        routing = fresh.routing
        return routing is None or caller.userid in [i.userid for i in routing.issued_to]

    def _owner(self, routing: Routing | None, caller: Caller) -> str | None:
        """The one person a refused presser is told the card belongs to: only when it is issued
        to its asker alone. A routed card's asker is the one person who may not approve it, and
        "belongs to @Ravi" sent the managers to the wrong person."""
        if routing is None or [i.userid for i in routing.issued_to] == [caller.userid]:
            return self.where.user
        return None

    async def update(self, card: Card, placement: Placement) -> Placement | bool:
        assert isinstance(placement, SlackPlacement)
        return await outbound.update_card(self.client, card, placement)

    async def update_list(self, where: ListPlacement, listing: Listing) -> bool:
        """Replaces a ``/countersign pending`` answer through its ``response_url``."""
        text, blocks = listed_message(listing)
        return await outbound.replace_list(
            where.url, text=text, blocks=blocks, session=self.client.session
        )

    async def post_audit(
        self, card: Card, placement: Placement, *, audit_channel: str | None = None
    ) -> bool:
        assert isinstance(placement, SlackPlacement)
        return await outbound.post_audit(
            self.client, card, placement, audit=audit_channel or self.audit_channel
        )

    async def post_privately(self, text: str) -> None:
        """Ephemeral in the channel, or a DM when the request came from the App Home."""
        if self.where.channel:
            await self.client.chat_postEphemeral(
                channel=self.where.channel,
                user=self.where.user,
                text=text,
                thread_ts=self.where.thread_ts,
                blocks=_shown(text),
            )
        else:
            await self.client.chat_postMessage(
                channel=self.where.user, text=text, parse="none", blocks=_shown(text)
            )
        log.info("told_privately", channel=self.where.channel, slack_user=self.where.user)

    async def notify(self, user: str, text: str) -> bool:
        """A message in the person's DM with the app, its data shown as typed."""
        try:
            await self.client.chat_postMessage(
                channel=user, text=text, blocks=_shown(text), **POST_OPTIONS
            )
        except SlackApiError as failed:
            log.error("notify_failed", slack_user=user, error=slack_error(failed))
            return False
        log.info("notified", slack_user=user)
        return True

    async def post_consent(self, user: str, card: ConsentCard) -> bool:
        """A consent card (``bot.cards.consent``) in the person's DM with the app."""
        return await consent_card.post_consent(self.client, user, card)

    async def send_copy(self, card: Card, user: str, *, token: str, push: str) -> Placement | None:
        """Posts the card, with Approve and Reject, in the person's DM with the app."""
        return await outbound.send_copy(
            self.client, card, user, installation=self.where.installation, token=token, push=push
        )

    async def typing(self, *, on: bool) -> None:
        """The assistant thread's status, or else the hourglass on the message; a missing
        status or reaction is never worth failing over."""
        if self.status is not None and not self._reacted:
            if not on:
                return  # the status is cleared when the turn ends (StatusLine.close)
            if not self.status.unsupported:
                self.status.show(texts.assistant.THINKING)
                return
        if not (self.where.channel and self.where.ts):
            return
        self._reacted = on
        call = self.client.reactions_add if on else self.client.reactions_remove
        try:
            await call(channel=self.where.channel, timestamp=self.where.ts, name=texts.HOURGLASS)
        except SlackApiError as failed:
            log.warning("reaction_failed", channel=self.where.channel, error=slack_error(failed))

    async def open_form(self, form: Form) -> None:
        assert self.where.trigger_id, "a form opens only in answer to a press"
        modal = reject_modal(
            token=form.token,
            channel=self.where.channel,
            thread_ts=self.where.thread_ts,
            summary=form.summary,
            card_id=form.card_id,
            hint=form.hint or texts.REASON_HINT,
        )
        await self.client.views_open(trigger_id=self.where.trigger_id, view=modal)

    def here(self, placements: Sequence[Placement]) -> Placement | None:
        """The card's Slack copy: a press from the channel, the App Home or /countersign."""
        return next((p for p in placements if isinstance(p, SlackPlacement)), None)
