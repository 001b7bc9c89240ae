"""Finds the person behind a chat user, only within the installation's merchant; never guesses.

One find-or-link for every surface, in this order:

1. The installation (workspace, org or Entra tenant the app is installed in) must be connected
   to a merchant. Nothing else makes it belong to one; an unconnected installation reaches no
   data at all, and the person is told so.
2. The person's own workspace must be the installation, or itself connected to the same
   merchant. In a Slack Connect channel the clicker's team differs from the installation's;
   before this rule, a user of any workspace sharing the channel could act there.
3. A linked identity reaches its person; otherwise the email the platform *verifies* (Slack:
   ``is_email_confirmed`` true; Teams: the tenant directory) links them, but only to a person
   of that merchant. Anyone else is told to ask their owner to link them.

The surface supplies only the verified email and the user's own workspace.
"""

from __future__ import annotations

from typing import Literal

import structlog

from bot.adapter import Adapter
from tools import Caller
from tools.directory import Directory
from tools.errors import NotFoundError

__all__ = ["Unresolved", "known", "resolve", "tell_unresolved"]

log = structlog.get_logger("bot.identity")

# Why nobody was found: the installation is not connected, or the person is not linked.
Unresolved = Literal["not_connected", "not_linked"]


async def resolve(
    directory: Directory,
    adapter: Adapter,
    installation: str,
    user: str,
    *,
    user_team: str | None = None,
    identified: tuple[int | None, Caller | None] | None = None,
) -> Caller | Unresolved:
    """The linked person (linking them now by verified email on first contact), or why not.

    ``installation`` is where the app is installed (never the clicker's own team); ``user_team``
    is the user's own workspace when the platform says (None: the installation itself).
    ``identified`` is ``Directory.identify``'s answer when the caller has just read it.
    """
    merchant, caller = identified or await directory.identify(adapter.platform, installation, user)
    if merchant is None:
        log.info("installation_not_connected", installation=installation)
        return "not_connected"
    foreign = user_team is not None and user_team != installation
    if foreign and await directory.merchant_of(adapter.platform, user_team or "") != merchant:
        log.info("identity_foreign", installation=installation, user_team=user_team, user=user)
        return "not_linked"
    if caller is not None:
        return caller
    return await _link(directory, adapter, installation, user)


def known(
    identified: tuple[int | None, Caller | None], installation: str, *, user_team: str | None
) -> Caller | None:
    """The caller ``resolve`` would return from this reading without another query, or None
    (then ``resolve`` decides: not connected, a foreign workspace, or a link to make)."""
    merchant, caller = identified
    foreign = user_team is not None and user_team != installation
    return caller if merchant is not None and not foreign else None


async def _link(
    directory: Directory, adapter: Adapter, installation: str, user: str
) -> Caller | Unresolved:
    email = await adapter.verified_email(user)
    if email is None:
        log.info("identity_unverified", installation=installation, user=user)
        return "not_linked"
    try:
        caller = await directory.link(adapter.platform, installation, user, email)
    except NotFoundError:
        log.info("identity_unknown", installation=installation, user=user)
        return "not_linked"
    log.info(
        "identity_linked",
        installation=installation,
        user=user,
        userid=caller.userid,
        tenant=caller.tenantid,
    )
    return caller


def tell_unresolved(adapter: Adapter, why: Unresolved) -> str:
    """The sentence for someone nobody could be resolved for, in the surface's words."""
    if why == "not_connected":
        return adapter.words.not_connected()
    return adapter.words.not_linked()
