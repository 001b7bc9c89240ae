"""Answers ``/countersign``: ``help``, the person's waiting cards, ``audit here``; never decides a card.

The answer goes to the command's ``response_url`` as an ephemeral message, so nobody else in
the channel sees another person's queue; the list is kept with each card it shows and drawn
again through that URL whenever one of them moves (``bot.presses.listed``). ``pending`` lists the cards waiting for the person,
then those they asked for that wait on others (``bot.slack.lists``); ``pending 9`` lists the
cards waiting for them from the ninth on (a list holds whole cards only, within Slack's 50
blocks). ``audit here`` makes the channel it is typed in the workspace's audit channel, where
every decision is recorded, those made in a DM included; only an owner or a manager may
choose it.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity
from bot.cards.card import Card
from bot.placement import ListPlacement
from bot.presses.listed import LIST_URL_LIFETIME, keep_list, listing
from bot.services import Services
from bot.slack import texts
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.caller import caller_of
from bot.slack.inbound import installation_of
from bot.slack.lists import listed_message, pending_list, spec_of
from bot.slack.outbound import replace_list
from tools import Caller, Connections, Platform, Role
from tools.errors import NotFoundError

__all__ = ["COMMAND", "redraw_list", "register"]

COMMAND = "/countersign"
# A card's position in the list: ASCII digits, not 0.
_POSITION = re.compile(r"0*[1-9][0-9]*")
_DIGITS = 9
log = structlog.get_logger("bot.slack.commands")


def register(app: AsyncApp, services: Services) -> None:
    async def on_command(
        ack: AsyncAck,
        command: dict[str, Any],
        context: AsyncBoltContext,
        client: AsyncWebClient,
        respond: AsyncRespond,
    ) -> None:
        await ack()
        installation, user = installation_of(context), str(command["user_id"])
        word = str(command.get("text") or "").strip().lower()
        services.tasks.spawn(
            answer(
                services,
                client,
                respond,
                caller_of(context),
                installation=installation,
                user=user,
                word=word,
                channel=str(command.get("channel_id") or ""),
                response_url=str(command.get("response_url") or ""),
            ),
            name=f"command {user}",
        )

    app.command(COMMAND)(on_command)


async def answer(
    services: Services,
    client: AsyncWebClient,
    respond: AsyncRespond,
    asker: identity.Once,
    *,
    installation: str,
    user: str,
    word: str,
    channel: str = "",
    response_url: str = "",
) -> None:
    """``pending [from]`` (or nothing) lists the person's cards; ``audit here`` sets the audit
    channel; anything else explains. A list is kept with each card it shows, so it is drawn
    again through ``response_url`` whenever one of them moves (``bot.presses.listed``)."""
    parts = word.split()
    start = _start(parts)
    if start is None and parts != ["audit", "here"]:
        await respond(text=texts.HELP, response_type="ephemeral")
        return
    adapter = SlackAdapter(client, Where(installation, user))
    # A command names the installation's team, never the user's own: with no user_team, Slack
    # is asked where the user belongs (``bot.slack.caller``). Taken as the installation's, a
    # Slack Connect user with a confirmed Fiesta email was linked as a manager and made a
    # shared channel the audit one.
    caller = await asker.caller()
    if isinstance(caller, str):
        await respond(text=identity.tell_unresolved(adapter, caller), response_type="ephemeral")
        return
    if start is None:
        said = await audit_here(services, caller, installation=installation, channel=channel)
        await respond(text=said, response_type="ephemeral")
        return
    queue = await listing(services, caller)
    mine = [spec_of(card, queue.now) for card in queue.mine]
    asked = [spec_of(card, queue.now) for card in queue.asked]
    await respond(
        text=texts.pending_text(len(mine), len(asked)) if mine or asked else texts.pending_none(),
        blocks=pending_list(mine, asked, start=min(start, max(len(mine) - 1, 0))),
        response_type="ephemeral",
    )
    if response_url and start == 0:
        # A later page (``pending 9``) is drawn again as the first: only the first is kept.
        where = ListPlacement(
            installation=installation,
            user=user,
            person=caller.userid,
            url=response_url,
            until=queue.now + LIST_URL_LIFETIME,
        )
        await keep_list(services, [*queue.mine, *queue.asked], where)
    log.info(
        "pending_listed",
        tenant=caller.tenantid,
        user=caller.userid,
        cards=len(mine),
        asked=len(asked),
    )


async def redraw_list(
    services: Services,
    adapter: SlackAdapter,
    response_url: str,
    presser: identity.Once,
    *,
    pressed: Card | None = None,
) -> None:
    """Replaces a private ``/countersign pending`` list a press was made on with the person's
    cards as they stand, the ``pressed`` card first once it is decided.

    A press refused as already decided moves no card, so no list is drawn again for it: this
    one, whose buttons were pressed, is drawn here through the press's own URL.
    """
    caller = await presser.caller()
    if isinstance(caller, str):
        return
    text, blocks = listed_message(await listing(services, caller, decided=pressed))
    await replace_list(response_url, text=text, blocks=blocks, session=adapter.client.session)


def _start(parts: list[str]) -> int | None:
    """Where ``pending`` starts listing (0-based), or None when the words ask for something else."""
    match parts:
        case [] | ["pending"] | ["list"]:
            return 0
        case ["pending" | "list", number] if _POSITION.fullmatch(number):
            # Past the last card the list starts from the last one, so a number of more digits
            # than any list is long is the end of the list. ``int()`` refuses more than 4,300
            # digits, and "²" passes ``str.isdigit``: either ended the command in a traceback,
            # and the person got no answer at all.
            digits = number.lstrip("0")
            return int(digits) - 1 if len(digits) <= _DIGITS else sys.maxsize
        case _:
            return None


async def audit_here(services: Services, caller: Caller, *, installation: str, channel: str) -> str:
    """Makes ``channel`` this workspace's audit channel, if the caller may; says what happened."""
    if not channel or channel.startswith("D"):
        return texts.audit_not_a_channel()
    if not caller.role.satisfies(Role.MANAGER):
        log.info("audit_channel_refused", tenant=caller.tenantid, user=caller.userid)
        return texts.audit_not_allowed()
    connections = Connections(services.db)
    try:
        await connections.set_audit_channel(Platform.SLACK, installation, channel)
    except NotFoundError as missing:
        return texts.refused(str(missing))
    log.info("audit_channel_set", tenant=caller.tenantid, user=caller.userid, channel=channel)
    return texts.audit_set(channel)
