"""Tells the people a card is issued to, privately, with a copy of it; never decides who they are.

Who a card is issued to is the engine's decision (the merchant's policy, stored on the card).
This module only reaches them: for each person other than the one who asked in the thread, a
copy of the card goes to them where they are on this surface (a DM from the app in Slack, a
1:1 chat in Teams), and every copy's placement is stored with the card, so whichever process
decides it updates them all. A person is reached through their identity in the installation
the card was asked in, or found there by the email the platform vouches for (Slack) and linked
as on a first message; anyone else is not reached here (the thread's card still names them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import structlog

from bot import identity
from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards import several, wording
from bot.cards.card import Card
from bot.placement import Placement, editable_of, lists_of_stored, placements_of_stored, stored
from bot.presses.decisions import show_recorded, update_copies
from bot.services import Services
from tools import Issuee

__all__ = ["SentBefore", "address", "send_copies"]

log = structlog.get_logger("bot.presses.copies")

# The copy a person (their platform id) was already sent, if one was; None: send it.
SentBefore = Callable[[str], Awaitable[Placement | None]]


async def send_copies(
    services: Services,
    adapter: Adapter,
    card: Card,
    people: Sequence[Issuee],
    *,
    installation: str,
    token: str,
    asker_too: bool = False,
    sent_before: SentBefore | None = None,
) -> list[Placement]:
    """Sends each of ``people`` (but the asker) a private copy, and stores where they went.

    ``installation`` is where the card was asked: a person is reached through their
    identity there (the adapter speaks for that installation only; another workspace of the
    same merchant would need its own token). ``asker_too``: the card was asked outside any
    conversation (an agent elsewhere, ``bot.mcp``), so its asker gets a copy like anyone.
    ``sent_before``: the copy a person may already have, sent by a process killed before it
    recorded it (a turn finished by another process): recorded, not sent again.

    Each copy is recorded as soon as it is out: recorded together at the end, a process killed
    between two left the first sent and unrecorded, and whoever finished the turn could not
    tell who still needed theirs.
    """
    sent: list[Placement] = []
    push = await _push(services, card)
    for person in people:
        if person.userid == card.userid and not asker_too:
            continue
        user = await address(services, adapter, person.userid, installation)
        if user is None:
            log.info("copy_unreachable", card_id=card.card_id, person=person.userid)
            continue
        placement = await sent_before(user) if sent_before is not None else None
        placement = placement or await adapter.send_copy(card, user, token=token, push=push)
        if placement is not None:
            # Each copy keeps what the card may have edited, and whose it is: a copy is
            # redrawn on its own, and once its reader gave a first of two approvals it
            # offers them nothing.
            kept = {"editable": editable_of(card.single), "person": person.userid}
            copy = placement.model_copy(update=kept)
            sent.append(copy)
            card = await _keep(services, adapter, card, [copy]) or card
    return sent


async def _push(services: Services, card: Card) -> str:
    """What a copy's notification says: what, and who asked."""
    lead = card.lead
    name = next((i.name for i in lead.issued_to if i.userid == card.userid), "")
    if card.several:
        return several.copy_text(len(card.items), name)
    return wording.copy_text(lead.summary, name or await _name(services, card.userid))


async def _name(services: Services, userid: int) -> str:
    person = await services.directory.person(userid)
    return person.name if person is not None else ""


async def address(
    services: Services, adapter: Adapter, userid: int, installation: str
) -> str | None:
    """The person's platform id in this installation: their linked identity, or else the
    member the platform vouches has their email (then linked, as on a first message).

    Without the second, a manager who had never written to the app got no copy at all. The
    member found is resolved like anyone writing in: Slack can find the email on a Slack
    Connect user of a workspace nobody connected, who was linked here and sent the copy.
    """
    found = await services.directory.addresses(userid, adapter.platform)
    linked = next((user for where, user in found if where == installation), None)
    if linked is not None:
        return linked
    email = await services.directory.email_of(userid)
    user = await adapter.member_by_email(email) if email else None
    if user is None:
        return None
    now_linked = await identity.resolve(services.directory, adapter, installation, user)
    return user if not isinstance(now_linked, str) and now_linked.userid == userid else None


async def _keep(
    services: Services, adapter: Adapter, card: Card, sent: Sequence[Placement]
) -> Card | None:
    """Adds the copies to the card's placements; shows them decided if it was meanwhile.
    The card as it then stands."""

    def add(stored_now: dict[str, Any] | None) -> dict[str, Any]:
        return stored([*placements_of_stored(stored_now), *sent], lists_of_stored(stored_now))

    now = await cards.change_posting(services.registry, card, add)
    if now is None:
        return None
    if not now.open:
        # Decided while the copies were on their way: the process showing it draws these too
        # before recording it shown, or, shown already, it is reopened and shown here.
        await show_recorded(services, adapter, now)
    elif now.looks != card.looks:
        # Approved once of two meanwhile: the process that did it updated the copies it knew
        # of; these were drawn as the card was before (a first approver's copy still offering
        # the Approve he had given).
        await update_copies(services, adapter, now)
    return now
