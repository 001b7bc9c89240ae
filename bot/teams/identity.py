"""Finds the person behind a Teams user: linked identity first, then their directory email; never guesses.

A Teams person is keyed by the Microsoft Entra tenant of the conversation (the installation) and
their ``aadObjectId`` (stable across chats and devices). The ``29:`` id in ``from.id`` is only an
address: it is what ``refresh.userIds`` needs, never who someone is. On first contact the
person's email comes from the connector's member lookup, which answers from the tenant's own
directory, and links them to the Countersign person with that email.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import structlog
from microsoft_agents.activity import Activity
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.connector import ConnectorClientBase
from microsoft_agents.hosting.core.connector.teams import TeamsConnectorClient

from tools import Caller
from tools.directory import Directory
from tools.errors import NotFoundError

__all__ = ["PLATFORM", "Who", "resolve", "who"]

PLATFORM = "teams"
log = structlog.get_logger("bot.teams.identity")


class Who:
    """The Teams identity of an activity's sender: tenant, AAD object id and ``29:`` address."""

    __slots__ = ("aad", "address", "name", "tenant")

    def __init__(self, tenant: str, aad: str, address: str, name: str) -> None:
        self.tenant, self.aad, self.address, self.name = tenant, aad, address, name


def _tenant(activity: Activity) -> str:
    conversation = activity.conversation
    if conversation is not None and conversation.tenant_id:
        return str(conversation.tenant_id)
    data: Any = activity.channel_data or {}
    tenant = (data.get("tenant") or {}).get("id") if isinstance(data, dict) else None
    return str(tenant or "")


def who(activity: Activity) -> Who | None:
    """The sender's identity, or None when the activity does not say (then nobody is resolved)."""
    sender = activity.from_property
    tenant = _tenant(activity)
    if sender is None or not sender.aad_object_id or not tenant or not sender.id:
        return None
    return Who(tenant, str(sender.aad_object_id), str(sender.id), str(sender.name or ""))


async def resolve(directory: Directory, context: TurnContext) -> Caller | None:
    """The linked person, linking them now by their directory email on first contact."""
    sender = who(context.activity)
    if sender is None:
        return None
    caller = await directory.resolve(PLATFORM, sender.tenant, sender.aad)
    if caller is not None:
        return caller
    email = await _member_email(context, sender)
    if email is None:
        return None
    try:
        caller = await directory.link(PLATFORM, sender.tenant, sender.aad, email)
    except NotFoundError:
        log.info("identity_unknown", installation=sender.tenant, user=sender.aad)
        return None
    log.info(
        "identity_linked",
        installation=sender.tenant,
        user=sender.aad,
        userid=caller.userid,
        tenant=caller.tenantid,
    )
    return caller


async def _member_email(context: TurnContext, sender: Who) -> str | None:
    """The sender's email from the connector (``GET …/members/{id}``), or None."""
    connector = context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]
    if not isinstance(connector, TeamsConnectorClient):
        return None
    activity = context.activity
    data: Any = activity.channel_data or {}
    team = (data.get("team") or {}).get("id") if isinstance(data, dict) else None
    where = str(team or (activity.conversation.id if activity.conversation else ""))
    try:
        member = await connector.get_conversation_member(where, sender.address)
    except (aiohttp.ClientError, ValueError) as failed:
        log.warning("member_lookup_failed", user=sender.aad, error=type(failed).__name__)
        return None
    # An anonymous meeting guest has no directory entry; their typed email proves nothing.
    if (member.user_role or "").lower() == "anonymous" or member.aad_object_id != sender.aad:
        return None
    return str(member.email) if member.email else None
