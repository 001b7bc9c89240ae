"""Takes a card an agent elsewhere asked for to the people it is issued to, in their DM with the app.

A card from the chat is posted in the thread it was asked in, with copies for the others. A
card from ``/mcp`` has no thread: every person it is issued to, its asker included when the
policy left them on it, gets it in a DM with the app, through each workspace of the merchant
the process serves. Whatever is decided on one copy is shown on all of them, as for any card.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog

from bot.adapter import Adapter
from bot.cards import card as cards
from bot.placement import Platform
from bot.presses.copies import send_copies
from bot.surface import Surface
from tools import Connections, Issuee, Proposal

__all__ = ["Delivered", "Reach", "deliver"]

log = structlog.get_logger("bot.mcp.delivery")


class Reach(Protocol):
    """A mounted surface that can speak in one of its installations outside any request."""

    @property
    def platform(self) -> Platform: ...

    async def with_installation(
        self, installation: str, work: Callable[[Adapter], Awaitable[None]]
    ) -> bool: ...


@dataclass(frozen=True, slots=True)
class Delivered:
    """Who got the card, and on which platform; who could not be reached."""

    reached: tuple[str, ...]
    platforms: tuple[str, ...]
    unreached: tuple[str, ...]


async def deliver(surface: Surface, reaches: Sequence[Reach], proposal: Proposal) -> Delivered:
    """Sends the fresh card to each person it is issued to, in their DM; says who got it."""
    routing = proposal.routing
    people = list(routing.issued_to) if routing else []
    card = await cards.load(surface.registry, proposal.card_id)
    if card is None or not people:
        return Delivered((), (), tuple(p.name for p in people))
    connected = await Connections(surface.registry.db).listing()
    left: list[Issuee] = list(people)
    reached: list[str] = []
    platforms: list[str] = []
    for reach in reaches:
        installations = [
            c.installation
            for c in connected
            if c.tenantid == card.lead.tenantid and str(c.platform) == reach.platform
        ]
        for installation in installations:
            if not left:
                break
            got = await _send(surface, reach, installation, card, left, token=proposal.card)
            if got:
                reached.extend(p.name for p in left if p.userid in got)
                left = [p for p in left if p.userid not in got]
                platforms.append(reach.platform)
    if left:
        log.info("mcp_card_unreached", card_id=proposal.card_id, people=[p.userid for p in left])
    return Delivered(tuple(reached), tuple(dict.fromkeys(platforms)), tuple(p.name for p in left))


async def _send(
    surface: Surface,
    reach: Reach,
    installation: str,
    card: cards.Card,
    people: list[Issuee],
    *,
    token: str,
) -> set[int]:
    got: set[int] = set()

    async def work(adapter: Adapter) -> None:
        sent = await send_copies(
            surface, adapter, card, people, installation=installation, token=token, asker_too=True
        )
        got.update(p.person for p in sent if p.person is not None)

    await reach.with_installation(installation, work)
    return got
