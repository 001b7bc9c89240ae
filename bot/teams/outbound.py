"""Reaches Teams conversations from one turn: its own, another on its service URL, a new 1:1 chat; never decides what to say.

A card has copies in several conversations (the chat it was asked in, a 1:1 chat with each
person it is issued to), and a press arrives in only one of them. The turn's context sends and
updates in its own conversation; every other copy is reached through the same connector client,
which talks to the service URL the turn's token vouched for. A copy recorded on another service
URL is not reached from here (that URL was never vouched for by this request); it is left as it
was and logged.

A 1:1 chat is opened with ``POST /v3/conversations``, naming the person by their AAD object id
in the member's ``id`` (Teams answers 400 when it is only in ``aadObjectId``) and the tenant; it
works once the app is installed for them (Teams refuses otherwise, and we log it). Teams returns
the same chat for the same person each time.
"""

from __future__ import annotations

import aiohttp
import structlog
from microsoft_agents.activity import (
    Activity,
    ChannelAccount,
    ConversationParameters,
    ResourceResponse,
)
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.connector import ConnectorClientBase

from bot.teams.auth import same_service_url

__all__ = ["FAILURES", "Outbound"]

log = structlog.get_logger("bot.teams.outbound")

# What a connector call meets when Teams refuses it or answers something that is not JSON of
# the expected shape (pydantic's ValidationError is a ValueError).
FAILURES = (aiohttp.ClientError, ValueError)


class Outbound:
    """Sends and updates activities in conversations reachable from ``context``."""

    def __init__(self, context: TurnContext) -> None:
        self.context = context

    @property
    def service_url(self) -> str:
        return str(self.context.activity.service_url or "")

    @property
    def conversation_id(self) -> str:
        conversation = self.context.activity.conversation
        return str(conversation.id) if conversation is not None else ""

    def reaches(self, service_url: str | None) -> bool:
        """Whether a copy recorded on ``service_url`` can be reached through this turn."""
        return bool(service_url) and same_service_url(str(service_url), self.service_url)

    def _connector(self) -> ConnectorClientBase:
        connector = self.context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]
        if not isinstance(connector, ConnectorClientBase):
            raise aiohttp.ClientConnectionError("this turn has no connector client")
        return connector

    async def send(self, conversation_id: str, activity: Activity) -> str | None:
        """Posts ``activity`` in a conversation; returns the new message's id."""
        if conversation_id == self.conversation_id:
            sent: ResourceResponse | None = await self.context.send_activity(activity)
        else:
            conversations = self._connector().conversations
            sent = await conversations.send_to_conversation(conversation_id, activity)
        return str(sent.id) if sent is not None and sent.id else None

    async def update(self, conversation_id: str, activity: Activity) -> None:
        """Replaces the message ``activity.id`` in a conversation, for everyone there."""
        if conversation_id == self.conversation_id:
            await self.context.update_activity(activity)
            return
        assert activity.id, "an update names the message it replaces"
        conversations = self._connector().conversations
        await conversations.update_activity(conversation_id, str(activity.id), activity)

    async def member(self, conversation_id: str, aad: str) -> tuple[str, str] | None:
        """The ``29:`` id and name of the person with AAD object id ``aad`` in a conversation.

        Teams looks a member up by either id; None when it does not answer for that person.
        """
        conversations = self._connector().conversations
        try:
            found = await conversations.get_conversation_member(conversation_id, aad)
        except FAILURES as failed:
            log.warning("member_unknown", person=aad, error=type(failed).__name__)
            return None
        if found.aad_object_id != aad or not found.id:
            return None
        return str(found.id), str(found.name or "")

    async def open_personal(self, aad: str, tenant: str) -> str:
        """The 1:1 chat between the bot and the person with AAD object id ``aad``."""
        bot = self.context.activity.recipient
        parameters = ConversationParameters(
            is_group=False,
            agent=ChannelAccount(id=bot.id if bot is not None and bot.id else "countersign"),
            members=[ChannelAccount(id=aad)],
            tenant_id=tenant,
            channel_data={"tenant": {"id": tenant}},
        )
        created = await self._connector().conversations.create_conversation(parameters)
        if not created.id:
            raise ValueError("Teams created a conversation without an id")
        return str(created.id)
