"""Finds the person behind a chat user: linked identity first, then the platform's verified email; never guesses.

One find-or-link for every surface. The surface supplies only the email its platform vouches
for (Slack: ``is_email_confirmed``; Teams: the tenant directory's member lookup); whether that
email belongs to a person of a merchant is the directory's to say. Anyone else is None, and the
surface tells them how to get linked.
"""

from __future__ import annotations

import structlog

from bot.adapter import Adapter
from tools import Caller
from tools.directory import Directory
from tools.errors import NotFoundError

__all__ = ["resolve"]

log = structlog.get_logger("bot.identity")


async def resolve(
    directory: Directory, adapter: Adapter, installation: str, user: str
) -> Caller | None:
    """The linked person, linking them now by verified email on first contact; None if unknown.

    ``installation`` is the workspace, org or Entra tenant the app is installed in (never the
    clicker's own team), ``user`` the platform's id for the person.
    """
    caller = await directory.resolve(adapter.platform, installation, user)
    if caller is not None:
        return caller
    email = await adapter.verified_email(user)
    if email is None:
        return None
    try:
        caller = await directory.link(adapter.platform, installation, user, email)
    except NotFoundError:
        log.info("identity_unknown", installation=installation, user=user)
        return None
    log.info(
        "identity_linked",
        installation=installation,
        user=user,
        userid=caller.userid,
        tenant=caller.tenantid,
    )
    return caller
