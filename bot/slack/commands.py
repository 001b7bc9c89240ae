"""Answers ``/countersign``: ``help``, the person's waiting cards, ``audit here``; never decides a card.

The answer goes to the command's ``response_url`` as an ephemeral message, so nobody else in
the channel sees another person's queue. ``pending`` lists the cards waiting for the person,
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
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot import identity
from bot.slack import texts
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.home import asked_cards, pending_cards
from bot.slack.inbound import installation_of
from bot.slack.lists import pending_list
from bot.surface import Surface
from tools import Caller, Connections, Platform, Role
from tools.errors import NotFoundError

__all__ = ["COMMAND", "redraw_list", "register"]

COMMAND = "/countersign"
# A card's position in the list: ASCII digits, not 0.
_POSITION = re.compile(r"0*[1-9][0-9]*")
_DIGITS = 9
log = structlog.get_logger("bot.slack.commands")


def register(app: AsyncApp, surface: Surface) -> None:
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
        surface.tasks.spawn(
            answer(
                surface,
                client,
                respond,
                installation=installation,
                user=user,
                word=word,
                channel=str(command.get("channel_id") or ""),
            ),
            name=f"command {user}",
        )

    app.command(COMMAND)(on_command)


async def answer(
    surface: Surface,
    client: AsyncWebClient,
    respond: AsyncRespond,
    *,
    installation: str,
    user: str,
    word: str,
    channel: str = "",
) -> None:
    """``pending [from]`` (or nothing) lists the person's cards; ``audit here`` sets the audit
    channel; anything else explains."""
    parts = word.split()
    start = _start(parts)
    if start is None and parts != ["audit", "here"]:
        await respond(text=texts.HELP, response_type="ephemeral")
        return
    adapter = SlackAdapter(client, Where(installation, user))
    # A command names the installation's team, never the user's own: with no user_team, Slack
    # is asked where the user belongs. Taken as the installation's, a Slack Connect user with
    # a confirmed Fiesta email was linked as a manager and made a shared channel the audit one.
    caller = await identity.resolve(surface.directory, adapter, installation, user, user_team=None)
    if isinstance(caller, str):
        await respond(text=identity.tell_unresolved(adapter, caller), response_type="ephemeral")
        return
    if start is None:
        said = await audit_here(surface, caller, installation=installation, channel=channel)
        await respond(text=said, response_type="ephemeral")
        return
    cards, asked = await pending_cards(surface, caller), await asked_cards(surface, caller)
    await respond(
        text=texts.pending_text(len(cards), len(asked)) if cards or asked else texts.pending_none(),
        blocks=pending_list(cards, asked, start=min(start, max(len(cards) - 1, 0))),
        response_type="ephemeral",
    )
    log.info(
        "pending_listed",
        tenant=caller.tenantid,
        user=caller.userid,
        cards=len(cards),
        asked=len(asked),
    )


async def redraw_list(surface: Surface, adapter: SlackAdapter, response_url: str) -> None:
    """Replaces a private ``/countersign pending`` list with the person's cards as they stand.

    Meera approved from her DM, and the list just below kept live buttons on that card; a
    press on it was refused as already approved, and the list still offered it. A press
    made on such a list now draws it again, the decided card gone from it.
    """
    where = adapter.where
    caller = await identity.resolve(
        surface.directory, adapter, where.installation, where.user, user_team=where.user_team
    )
    if isinstance(caller, str):
        return
    cards, asked = await pending_cards(surface, caller), await asked_cards(surface, caller)
    await AsyncWebhookClient(response_url).send(
        text=texts.pending_text(len(cards), len(asked)) if cards or asked else texts.pending_none(),
        blocks=pending_list(cards, asked, start=0),
        replace_original=True,
    )


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


async def audit_here(surface: Surface, caller: Caller, *, installation: str, channel: str) -> str:
    """Makes ``channel`` this workspace's audit channel, if the caller may; says what happened."""
    if not channel or channel.startswith("D"):
        return texts.audit_not_a_channel()
    if not caller.role.satisfies(Role.MANAGER):
        log.info("audit_channel_refused", tenant=caller.tenantid, user=caller.userid)
        return texts.audit_not_allowed()
    connections = Connections(surface.registry.db)
    try:
        await connections.set_audit_channel(Platform.SLACK, installation, channel)
    except NotFoundError as missing:
        return texts.refused(str(missing))
    log.info("audit_channel_set", tenant=caller.tenantid, user=caller.userid, channel=channel)
    return texts.audit_set(channel)
