"""Decides a press of Approve or Reject, on any surface, with one ladder of outcomes; never runs a write itself.

The only way to a write is ``Registry.approve`` with the signed card the button carried, pressed
by a person the surface resolved; the engine verifies the token, the presser and the card's
state. This module reads nothing of the token. It turns every way a press can end into the same
thing on every surface:

- decided (done, failed, rejected): every copy of the card updated, the audit line, the model
  told (``bot.presses.decisions``);
- refused by the engine (not yours, expired, already decided, tampered): the presser is told
  privately; an expired card also says so on the card, for everyone, and so does a decided
  card whose decision was never shown;
- the database unreachable: the presser is told to press again later; nothing is shown as
  decided, because whatever was half-done is the engine's to settle;
- anything unexpected: logged in full; the card, if the engine moved it to ``failed``, is shown
  failed like any other decision, and the presser is told in plain words.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import structlog
from sqlalchemy.exc import SQLAlchemyError
from structlog.contextvars import bound_contextvars

from bot import identity
from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards.card import Card
from bot.cards.cardspec import Verdict
from bot.placement import (
    Placement,
    first_copy,
    lists_of_stored,
    placements_of_stored,
    same_message,
    stored,
)
from bot.presses.decisions import show
from bot.services import Services
from tools import Caller
from tools.errors import (
    CardDecidedError,
    CardExpiredError,
    CountersignError,
    NotYourCardError,
)

__all__ = ["DATABASE_DOWN", "Ended", "Ending", "Press", "Verdict", "decide"]

log = structlog.get_logger("bot.presses.ladder")

# How a press ended, as its timing metric is labelled.
Ending = Literal["decided", "refused", "unlinked", "database_down", "failed"]
# What a press meets when the database is unreachable: SQLAlchemy's errors once connected, the
# driver's refused or reset connection while connecting.
DATABASE_DOWN = (SQLAlchemyError, ConnectionError)


@dataclass(frozen=True, slots=True)
class Press:
    """Who pressed what: the installation and platform user, the signed card, the verb.

    ``card_id`` is what the surface read beside the button (a block id, the card's data); it is
    used only to show the card, never to decide anything: the token decides.
    """

    installation: str
    user: str
    token: str
    verb: Verdict
    card_id: str | None = None
    reason: str = ""
    user_team: str | None = None
    # The message pressed, as a copy of the card (None where the surface cannot say): recorded
    # when the card has no copy here, as its turn was killed between posting and recording it.
    pressed: Placement | None = None
    # When the press arrived (``time.monotonic``), for the press latency operators watch.
    arrived: float = field(default_factory=time.monotonic, compare=False)


@dataclass(frozen=True, slots=True)
class Ended:
    """How a press ended, who pressed (None when nobody could be resolved), and the card it
    was about as its token names it (what a surface refreshes afterwards)."""

    outcome: Ending
    caller: Caller | None = None
    card_id: str | None = None


async def decide(
    services: Services, adapter: Adapter, press: Press, presser: identity.Once | None = None
) -> Ended:
    """Decides the press as the presser and shows the result; the same ladder on every surface.

    ``presser`` is the request's caller as its surface keeps it (the press's installation,
    user and ``user_team``), so the steps after the press find the same person without another
    lookup; without it the presser is found from the press.

    The card shown afterwards is the one the signed token names; what the surface read beside
    the button stands in only for a token that does not hold (to show that card as it is).
    """
    press = replace(press, card_id=services.registry.card_id_of(press.token) or press.card_id)
    presser = presser or identity.Once(
        services.directory, adapter, press.installation, press.user, user_team=press.user_team
    )
    with bound_contextvars(
        platform=adapter.platform, platform_user=press.user, card_id=press.card_id
    ):
        try:
            ended = await _decide(services, adapter, press, presser)
        except DATABASE_DOWN as unreachable:
            # With the database stopped, a press used to end in a logged traceback and silence:
            # the presser saw nothing happen and could not tell a lost press from a slow one.
            # Whatever was half-done is the engine's to settle (the claim and the write each
            # commit or roll back whole); here the person learns to press again later.
            log.warning("press_failed_database", error=type(unreachable).__name__)
            await adapter.post_privately(adapter.words.database_unreachable())
            ended = Ended("database_down")
    ended = replace(ended, card_id=press.card_id)
    services.metrics.press_seconds.labels(press.verb, ended.outcome).observe(
        time.monotonic() - press.arrived
    )
    return ended


async def _decide(
    services: Services, adapter: Adapter, press: Press, presser: identity.Once
) -> Ended:
    caller = await presser.caller()
    if isinstance(caller, str):
        await adapter.post_privately(identity.tell_unresolved(adapter, caller))
        return Ended("unlinked")
    with bound_contextvars(tenant=caller.tenantid, person=caller.userid):
        outcome = await _ladder(services, adapter, press, caller)
    return Ended(outcome, caller)


async def _ladder(services: Services, adapter: Adapter, press: Press, caller: Caller) -> Ending:
    """Every way a press can end, for a card of one write or of several."""
    try:
        result = await cards.decide(
            services.registry, services.agent, press.token, caller, press.verb, press.reason
        )
    except NotYourCardError as refused:
        await _not_yours(services, adapter, refused.card_id or press.card_id)
        log.info("press_refused", why="not_your_card")
        return "refused"
    except CardExpiredError as expired:
        await _show_here(services, adapter, expired.card_id or press.card_id)
        await adapter.post_privately(adapter.words.refused(str(expired)))
        log.info("press_refused", why="expired")
        return "refused"
    except CardDecidedError as decided:
        # A process that died after the write committed, before the card was updated, left
        # it with live buttons and no audit line; a press on it only said "already approved",
        # privately. Now the press shows the decision, unless it was shown already.
        await _record_pressed(services, adapter, press, decided.card_id or press.card_id)
        await _show_here(services, adapter, decided.card_id or press.card_id, decided_only=True)
        await adapter.post_privately(adapter.words.refused(str(decided)))
        log.info("press_refused", why="CardDecidedError")
        return "refused"
    except CountersignError as refused:
        await adapter.post_privately(adapter.words.refused(str(refused)))
        log.info("press_refused", why=type(refused).__name__)
        return "refused"
    except DATABASE_DOWN:
        raise  # told by ``decide``, before any unexpected failure is assumed
    except Exception:  # shown like any other failure below, and logged in full
        # An exception the engine did not expect used to leave the card "failed" in the
        # database but live in the channel: buttons still there, no audit line, and the
        # presser told nothing. The engine has already moved the card (and audited it); here
        # it is shown like any decision, and the presser learns it did not go through.
        log.exception("press_failed")
        await _show_here(services, adapter, press.card_id, decided_only=True)
        await adapter.post_privately(adapter.words.press_failed())
        return "failed"
    recorded = None
    if not _known(press, result.card):
        recorded = await _record_pressed(services, adapter, press, result.card.card_id)
    return await _shown(services, adapter, replace(result, card=recorded or result.card))


def _known(press: Press, card: Card | None) -> bool:
    """Whether the message pressed is a copy the card has recorded (or no message is known)."""
    pressed = press.pressed
    return pressed is None or (
        card is not None and any(same_message(p, pressed) for p in card.placements)
    )


async def _record_pressed(
    services: Services, adapter: Adapter, press: Press, card_id: str | None
) -> Card | None:
    """Records the message pressed as a copy of the card when it is not one yet (the first,
    when the card has none on this surface); the card as it then stands, or None.

    A server killed between posting a card (or a DM copy) and recording where left a message
    nobody could update: pressed, the card was decided, and that message kept live buttons
    (and, the thread's card, no audit line) for good.
    """
    pressed = press.pressed
    card = await cards.load(services.registry, card_id)
    if pressed is None or card is None or _known(press, card):
        return None

    def after(where: dict[str, Any] | None) -> dict[str, Any]:
        kept = placements_of_stored(where)
        return stored([*kept, pressed], lists_of_stored(where))

    here = adapter.here(card.placements) is not None
    log.info("pressed_copy_recorded", card_id=card.card_id, first=not here)
    change = after if here else first_copy(pressed)
    return await cards.change_posting(services.registry, card, change)


async def _shown(services: Services, adapter: Adapter, decided: cards.Decided) -> Ending:
    card = decided.card
    if not decided.moved:
        # Every write of a card of several was decided by someone else first (a double tap,
        # two approvers at once): the presser is told privately; the press that decided them
        # shows the card.
        refusal = decided.refusal
        if isinstance(refusal, CardExpiredError):  # its writes ran out of time unswept
            await show(services, adapter, card)
        await adapter.post_privately(adapter.words.refused(str(refusal) if refusal else ""))
        log.info("press_refused", why=type(refusal).__name__)
        return "refused"
    log.info("card_decided", status=str(card.lead.status))
    if not card.running:
        # A write still mid-write belongs to another press, which shows the card when done.
        await show(services, adapter, card)
    return "decided"


async def _not_yours(services: Services, adapter: Adapter, card_id: str | None) -> None:
    """Tells the presser whose card it is (as this surface names them), if it is shown here."""
    card = await cards.load(services.registry, card_id)
    placement = adapter.here(card.placements if card is not None else ())
    waiting = tuple(i.name for i in card.lead.waiting_for if i.name) if card else ()
    await adapter.post_privately(
        adapter.words.not_your_card(placement.owner if placement else None, waiting)
    )


async def _show_here(
    services: Services, adapter: Adapter, card_id: str | None, *, decided_only: bool = False
) -> None:
    """Shows the card as it stands, for everyone, when it is shown here (and, with
    ``decided_only``, only once nothing of it waits or runs)."""
    card = await cards.load(services.registry, card_id)
    if card is None or adapter.here(card.placements) is None:
        return
    if not (decided_only and card.open):
        await show(services, adapter, card)
