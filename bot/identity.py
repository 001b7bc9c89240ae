"""Finds the person behind a chat user, only within the installation's merchant; never guesses.

One find-or-link for every surface, in this order:

1. The installation (workspace, org or Entra tenant the app is installed in) must be connected
   to a merchant. Nothing else makes it belong to one; an unconnected installation reaches no
   data at all, and the person is told so.
2. The person's own workspace must belong: be the installation, be a workspace of the
   organisation that is the installation (an Enterprise Grid org-wide install), or be itself
   connected to the same merchant. This is checked on every entry point, linked or not.
3. A linked identity reaches its person; otherwise the email the platform *verifies* (Slack:
   ``is_email_confirmed`` true; Teams: the tenant directory) links them, but only to a person
   of that merchant, and only when the platform's own profile (``Adapter.home_of``) puts the
   user in a workspace of step 2, whatever the request said. Anyone else is told to ask their
   owner to link them.

The surface supplies only the verified email and where the user belongs: the request's own
word (a signed event's ``user_team``, a press's ``user.team_id``) and the platform's. The
request's word is enough to reach an identity already linked; a link, which lasts, is made
only on the platform's.

``Once`` is how a request's caller is found: each surface makes one per request (Slack's bolt
middleware, the Teams turn handler) and every step of that request asks it.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import structlog

from bot.adapter import Adapter
from tools import Caller, Directory
from tools.errors import NotFoundError

__all__ = ["Once", "Unresolved", "known", "resolve", "tell_unresolved"]

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
    is the user's own workspace as the signed request states it, None when it does not (then
    the platform is asked). ``identified`` is ``Directory.identify``'s answer when the caller
    has just read it.
    """
    merchant, caller = identified or await directory.identify(adapter.platform, installation, user)
    if merchant is None:
        log.info("installation_not_connected", installation=installation)
        return "not_connected"
    belongs = await _belongs(
        directory, adapter, merchant, installation=installation, user=user, user_team=user_team
    )
    if not belongs:
        log.info("identity_foreign", installation=installation, user_team=user_team, user=user)
        return "not_linked"
    if caller is not None:
        return caller
    if not await _at_home(directory, adapter, merchant, installation=installation, user=user):
        return "not_linked"
    return await _link(directory, adapter, installation, user)


class Once:
    """The caller of one request, resolved the first time a step asks and kept for the rest of
    the request; never resolved again within it.

    It looks nobody up until asked, so a request that needs nobody (a help command, a thumb
    on no answer) costs no lookup, and the lookup still runs after the ack. A lookup that
    raised (the database unreachable) is not kept: the next step asks again.
    """

    def __init__(
        self,
        directory: Directory,
        adapter: Adapter,
        installation: str,
        user: str,
        *,
        user_team: str | None = None,
    ) -> None:
        self.installation, self.user, self.user_team = installation, user, user_team
        self._directory, self._adapter = directory, adapter
        self._found: Caller | Unresolved | None = None
        # Steps of one request run one after another; the lock keeps it one lookup even if not.
        self._lock = asyncio.Lock()

    async def caller(self) -> Caller | Unresolved:
        """The linked person (linked now on first contact), or why not; see ``resolve``."""
        async with self._lock:
            if self._found is None:
                self._found = await resolve(
                    self._directory,
                    self._adapter,
                    self.installation,
                    self.user,
                    user_team=self.user_team,
                )
            return self._found


def known(
    identified: tuple[int | None, Caller | None], installation: str, *, user_team: str | None
) -> Caller | None:
    """The caller ``resolve`` would return from this reading without another query, or None
    (then ``resolve`` decides: not connected, another workspace, or a link to make)."""
    merchant, caller = identified
    return caller if merchant is not None and user_team == installation else None


async def _belongs(
    directory: Directory,
    adapter: Adapter,
    merchant: int,
    *,
    installation: str,
    user: str,
    user_team: str | None,
) -> bool:
    """Whether the user's own workspace is the installation's merchant's: the request's word
    first, else the platform's.

    A slash command and an App Home opening name only the installation, never the user's own
    workspace, and they were taken as the installation's: a Slack Connect user of a workspace
    nobody connected, whose profile carried a confirmed Fiesta email, was linked as that
    manager, saw her cards, got her DM copies and chose the audit channel. Where the request
    does not say, or names a workspace that is not the merchant's (an Enterprise Grid member's
    own ``T…`` under the org's ``E…`` install), the platform is asked where the user belongs.
    It must agree with what the request said: a press from another workspace stays refused.
    """
    platform = adapter.platform
    if user_team is not None and await _ours(
        directory, platform, user_team, installation, merchant
    ):
        return True
    home = await adapter.home_of(user)
    if home is None or (user_team is not None and user_team not in home.ids):
        return False
    others = tuple(team for team in home.ids if team != user_team)
    return await _any_ours(directory, platform, others, installation, merchant)


async def _at_home(
    directory: Directory, adapter: Adapter, merchant: int, *, installation: str, user: str
) -> bool:
    """Whether the platform's own profile puts the user in a workspace of the merchant, the
    one check a link waits for.

    An event without ``user_team`` was read as from the installation's own ``team``, and that
    was enough: a user whose profile said T0EVILCO, with Meera's confirmed email, was linked
    as her for good, and his next press approved a request as Meera. The request's word still
    lets a linked person in without asking Slack each time; a new link asks.
    """
    home = await adapter.home_of(user)
    if home is None:
        log.info("identity_home_unknown", installation=installation, user=user)
        return False
    if await _any_ours(directory, adapter.platform, home.ids, installation, merchant):
        return True
    # The request said the user is ours and the platform says not: worth someone's attention.
    log.warning("identity_home_mismatch", installation=installation, user=user, home=list(home.ids))
    return False


async def _any_ours(
    directory: Directory, platform: str, teams: tuple[str, ...], installation: str, merchant: int
) -> bool:
    for team in teams:
        if await _ours(directory, platform, team, installation, merchant):
            return True
    return False


async def _ours(
    directory: Directory, platform: str, team: str, installation: str, merchant: int
) -> bool:
    """The installation itself, or a workspace (or org) connected to the same merchant."""
    return team == installation or await directory.merchant_of(platform, team) == merchant


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
