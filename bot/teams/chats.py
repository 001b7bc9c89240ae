"""Keeps each Teams person's 1:1 chat with the bot, as Teams itself gave it; never opens one.

A card asked for at ``/mcp`` comes with no conversation, and Teams lets the bot write in a chat
only through a service URL Teams gave it. So every activity that arrives from a person's 1:1
(personal) chat, in a tenant connected to a merchant, keeps that chat: its service URL, its id,
the bot's id there, and who the person is there (``teams_chats``). Only activities whose token
was checked reach this (``bot.teams.app`` answers 401 before the SDK sees anything else), so the
service URL kept is one a Microsoft-signed token vouched for. The app uninstalled for the person
forgets their chat. A chat is found again only by the tenant it was kept in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from microsoft_agents.activity import (
    Activity,
    ActivityTypes,
    ChannelAccount,
    ConversationAccount,
)
from microsoft_agents.hosting.core import AgentApplication, TurnContext, TurnState
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from bot.services import Services
from bot.teams.identity import Who
from tools.db import Database, TeamsChatRow

__all__ = ["Chat", "chat_of", "find", "forget", "keep", "register"]

log = structlog.get_logger("bot.teams.chats")
_PERSONAL = "personal"


@dataclass(frozen=True, slots=True)
class Chat:
    """One person's 1:1 chat with the bot: where it is, and who they are in it."""

    tenant: str
    aad: str
    address: str
    name: str
    service_url: str
    conversation_id: str
    bot: str

    def reference(self) -> Activity:
        """The activity ``continue_conversation`` takes to speak in this chat."""
        return Activity(
            type=ActivityTypes.event,
            name="ContinueConversation",
            channel_id="msteams",
            service_url=self.service_url,
            conversation=ConversationAccount(
                id=self.conversation_id, tenant_id=self.tenant, conversation_type=_PERSONAL
            ),
            recipient=ChannelAccount(id=self.bot),
            from_property=ChannelAccount(id=self.address, aad_object_id=self.aad, name=self.name),
        )

    def who(self) -> Who:
        """The person as a message of theirs in this chat names them."""
        return Who(self.tenant, self.aad, self.address, self.name, self.conversation_id)


def chat_of(activity: Activity) -> Chat | None:
    """The 1:1 chat ``activity`` came from, or None when it is not from one (a channel, a
    group chat) or does not say enough to write there again."""
    conversation, sender, bot = activity.conversation, activity.from_property, activity.recipient
    if conversation is None or conversation.conversation_type != _PERSONAL:
        return None
    data: Any = activity.channel_data or {}
    tenant = conversation.tenant_id or (
        (data.get("tenant") or {}).get("id") if isinstance(data, dict) else None
    )
    if sender is None or bot is None or not (sender.aad_object_id and sender.id and bot.id):
        return None
    if not (tenant and conversation.id and activity.service_url):
        return None
    return Chat(
        tenant=str(tenant),
        aad=str(sender.aad_object_id),
        address=str(sender.id),
        name=str(sender.name or ""),
        service_url=str(activity.service_url),
        conversation_id=str(conversation.id),
        bot=str(bot.id),
    )


def _uninstalled(activity: Activity) -> bool:
    """The app was removed from the person's personal scope: the chat takes no more messages."""
    if activity.type == ActivityTypes.installation_update:
        return str(activity.action or "").startswith("remove")
    updated = activity.type == ActivityTypes.conversation_update
    removed = (activity.members_removed or []) if updated else []
    bot = activity.recipient.id if activity.recipient is not None else None
    return bool(bot) and any(member.id == bot for member in removed)


async def keep(services: Services, activity: Activity) -> None:
    """Keeps (or, on uninstall, forgets) the 1:1 chat a token-checked activity came from."""
    chat = chat_of(activity)
    if chat is None:
        return
    db = services.db
    if _uninstalled(activity):
        await forget(db, chat.tenant, chat.aad)
        return
    if await services.directory.merchant_of("teams", chat.tenant) is None:
        return  # a tenant nobody connected: no card of any merchant is ever posted there
    await _store(db, chat, services.registry.now())


async def _store(db: Database, chat: Chat, now: datetime) -> None:
    values = {
        "service_url": chat.service_url,
        "conversation_id": chat.conversation_id,
        "bot": chat.bot,
        "address": chat.address,
        "name": chat.name,
    }
    # Read first: a write session takes SQLite's write lock as it begins, and every message of
    # a 1:1 chat took it only to find its chat kept as it was.
    async with db.session() as session:
        row = await session.get(TeamsChatRow, (chat.tenant, chat.aad))
        if row is not None and _same(row, values):
            return
    try:
        async with db.session(write=True) as session, session.begin():
            row = await session.get(TeamsChatRow, (chat.tenant, chat.aad))
            if row is not None and _same(row, values):
                return  # another activity of the person's kept it meanwhile
            if row is None:
                row = TeamsChatRow(tenant=chat.tenant, aad=chat.aad, updated_at=now, **values)
                session.add(row)
            else:
                for key, value in values.items():
                    setattr(row, key, value)
                row.updated_at = now
    except IntegrityError:
        return  # two of the person's activities at once: the other one kept the chat
    log.info("teams_chat_kept", tenant=chat.tenant, person=chat.aad)


def _same(row: TeamsChatRow, values: dict[str, str]) -> bool:
    return all(getattr(row, key) == value for key, value in values.items())


async def forget(db: Database, tenant: str, aad: str) -> None:
    async with db.session(write=True) as session, session.begin():
        await session.execute(
            delete(TeamsChatRow).where(TeamsChatRow.tenant == tenant, TeamsChatRow.aad == aad)
        )
    log.info("teams_chat_forgotten", tenant=tenant, person=aad)


async def find(db: Database, tenant: str, aad: str | None = None) -> Chat | None:
    """The person's chat kept in ``tenant``; without ``aad``, the chat kept there last (any
    person's: a way to the tenant's service URL). Never a chat kept in another tenant."""
    stmt = select(TeamsChatRow).where(TeamsChatRow.tenant == tenant)
    if aad is not None:
        stmt = stmt.where(TeamsChatRow.aad == aad)
    stmt = stmt.order_by(TeamsChatRow.updated_at.desc()).limit(1)
    async with db.session() as session:
        row = (await session.scalars(stmt)).first()
    if row is None:
        return None
    return Chat(
        row.tenant,
        row.aad,
        row.address,
        row.name,
        row.service_url,
        row.conversation_id,
        row.bot,
    )


def register(application: AgentApplication[TurnState], services: Services) -> None:
    """Keeps the 1:1 chat of every activity before its route runs."""

    async def keep_chat(context: TurnContext, state: TurnState) -> bool:
        try:
            await keep(services, context.activity)
        except (SQLAlchemyError, OSError, TimeoutError):
            # The database unreachable: the activity is still answered as it would be without
            # it, and the chat is kept on the person's next one.
            log.exception("teams_chat_not_kept")
        return True

    application.before_turn(keep_chat)
