"""Finds the person behind a Slack user: linked identity first, then verified email; never guesses.

The installation is the workspace (or, for org-wide installs, the organisation) the app is
installed in, taken from the authorization — never the clicker's ``user.team_id``, which in a
Slack Connect channel is their own workspace and would look up the wrong people.
"""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tools import Caller, CardRecord
from tools.directory import Directory
from tools.errors import NotFoundError

__all__ = ["PLATFORM", "installation_of", "owner_slack_user", "resolve", "slack_error"]

PLATFORM = "slack"
log = structlog.get_logger("bot.slack.identity")


def installation_of(context: AsyncBoltContext) -> str:
    """The id of the installation a request belongs to: enterprise id for org-wide installs."""
    if context.is_enterprise_install and context.enterprise_id:
        return context.enterprise_id
    auth = context.authorize_result
    team = (auth.team_id if auth is not None else None) or context.team_id
    return team or context.enterprise_id or ""


async def resolve(
    directory: Directory, client: AsyncWebClient, installation: str, slack_user: str
) -> Caller | None:
    """The linked person, linking them now by verified email on first contact; None if unknown."""
    caller = await directory.resolve(PLATFORM, installation, slack_user)
    if caller is not None:
        return caller
    email = await _verified_email(client, slack_user)
    if email is None:
        return None
    try:
        caller = await directory.link(PLATFORM, installation, slack_user, email)
    except NotFoundError:
        log.info("identity_unknown", installation=installation, user=slack_user)
        return None
    log.info(
        "identity_linked",
        installation=installation,
        user=slack_user,
        userid=caller.userid,
        tenant=caller.tenantid,
    )
    return caller


async def _verified_email(client: AsyncWebClient, slack_user: str) -> str | None:
    try:
        response = await client.users_info(user=slack_user)
    except SlackApiError as failed:
        log.warning("users_info_failed", user=slack_user, error=slack_error(failed))
        return None
    user: dict[str, Any] = response.get("user") or {}
    # A bot, a deactivated account or an unconfirmed address is never enough to see a shop.
    if user.get("is_bot") or user.get("deleted") or user.get("is_email_confirmed") is False:
        return None
    email = (user.get("profile") or {}).get("email")
    return str(email) if email else None


def owner_slack_user(record: CardRecord | None) -> str | None:
    """The Slack user a card was issued to, as recorded when it was posted."""
    if record is None or not record.surface:
        return None
    owner = record.surface.get("user")
    return str(owner) if owner else None


def slack_error(failed: SlackApiError) -> str:
    """Slack's error code (``channel_not_found``), or the HTTP status when there is none."""
    data = failed.response.data
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return f"http {failed.response.status_code}"
