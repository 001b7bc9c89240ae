"""Reads who sent a Teams activity and the email their tenant's directory gives them; never links anyone.

A Teams person is keyed by the Microsoft Entra tenant of the conversation (the installation) and
their ``aadObjectId`` (stable across chats and devices). The ``29:`` id in ``from.id`` is only an
address: it is what ``refresh.userIds`` needs, never who someone is. The email, and the tenant
the member is of, come from the connector's member lookup, which answers from the directory;
the core (``bot.identity``) decides whether they link anyone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
import structlog
from microsoft_agents.activity import Activity
from microsoft_agents.activity.teams import TeamsChannelAccount
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.connector import ConnectorClientBase
from microsoft_agents.hosting.core.connector.teams import TeamsConnectorClient

__all__ = ["Profile", "Who", "member_by_email", "member_profile", "who"]

log = structlog.get_logger("bot.teams.identity")


@dataclass(frozen=True, slots=True)
class Who:
    """The Teams identity of an activity's sender, and where to look them up.

    ``roster`` is the team (or, outside a team, the conversation) whose members the connector
    is asked about.
    """

    tenant: str
    aad: str
    address: str
    name: str
    roster: str


@dataclass(frozen=True, slots=True)
class Profile:
    """What the directory says of a member: their AAD object id, the email it vouches for (None
    for an anonymous guest or no email) and the Entra tenant they are of (None when unsaid).

    The tenant is the member's own, which an external user's chat with a tenant's people does
    not share: the activity names only the tenant the conversation is in.
    """

    aad: str
    email: str | None
    tenant: str | None


def _profile(member: TeamsChannelAccount, aad: str) -> Profile:
    # An anonymous meeting guest has no directory entry; their typed email proves nothing.
    anonymous = (member.user_role or "").lower() == "anonymous"
    email = None if anonymous or not member.email else str(member.email)
    return Profile(aad, email, _tenant_of(member))


def _tenant_of(member: TeamsChannelAccount) -> str | None:
    return str(member.tenant_id) if member.tenant_id else None


def _tenant(activity: Activity) -> str:
    conversation = activity.conversation
    if conversation is not None and conversation.tenant_id:
        return str(conversation.tenant_id)
    data: Any = activity.channel_data or {}
    tenant = (data.get("tenant") or {}).get("id") if isinstance(data, dict) else None
    return str(tenant or "")


def _roster(activity: Activity) -> str:
    data: Any = activity.channel_data or {}
    team = (data.get("team") or {}).get("id") if isinstance(data, dict) else None
    return str(team or (activity.conversation.id if activity.conversation else ""))


def who(activity: Activity) -> Who | None:
    """The sender's identity, or None when the activity does not say (then nobody is resolved)."""
    sender = activity.from_property
    tenant = _tenant(activity)
    if sender is None or not sender.aad_object_id or not tenant or not sender.id:
        return None
    return Who(
        tenant, str(sender.aad_object_id), str(sender.id), str(sender.name or ""), _roster(activity)
    )


async def member_profile(context: TurnContext, sender: Who) -> Profile | None:
    """The sender as the directory has them (``GET …/members/{id}``), or None."""
    connector = context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]
    if not isinstance(connector, TeamsConnectorClient):
        return None
    try:
        member = await connector.get_conversation_member(sender.roster, sender.address)
    except (aiohttp.ClientError, ValueError) as failed:
        log.warning("member_lookup_failed", user=sender.aad, error=type(failed).__name__)
        return None
    return _profile(member, sender.aad) if member.aad_object_id == sender.aad else None


async def member_by_email(context: TurnContext, roster: str, email: str) -> Profile | None:
    """The member the tenant's directory gives ``email``, or None.

    The connector finds a member by their UPN too (``GET …/members/{upn}``), answering from the
    tenant's own directory, as Slack's ``users.lookupByEmail`` does for a workspace. Only a
    member whose directory email is the one asked for counts; an anonymous guest never does.
    """
    connector = context.services.get(ConnectorClientBase)  # type: ignore[type-abstract]
    if not isinstance(connector, TeamsConnectorClient) or not roster:
        return None
    try:
        member = await connector.get_conversation_member(roster, email)
    except (aiohttp.ClientError, ValueError) as failed:
        log.info("member_not_found", error=type(failed).__name__)
        return None
    found = str(member.email or member.user_principal_name or "")
    if (member.user_role or "").lower() == "anonymous" or found.lower() != email.lower():
        return None
    if not member.aad_object_id:
        return None
    return Profile(str(member.aad_object_id), email, _tenant_of(member))
