"""Answers one message a person wrote, on any surface: once, as the person, with the model; never approves.

A turn runs after the request that brought it was answered (Slack's ack, Teams' 202), in the
surface's task set. Before any work its delivery is claimed in the ``receipts`` table, so a
redelivered message is answered once whichever process receives it; then the sender is found
(or linked, or told how to get linked), the model answers as them, and its reply and any cards
it proposed are posted where the message came from. The model's cards are only proposals: this
module posts them and records where; nothing here can execute one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from sqlalchemy.exc import IntegrityError
from structlog.contextvars import bound_contextvars

from bot import identity
from bot.adapter import Adapter, Steps, Stream, stream_of
from bot.cards import wording
from bot.cards.answered import Answer
from bot.presses.ladder import DATABASE_DOWN
from bot.runtime import receipts
from bot.services import Background, Services
from bot.turns.posting import post_card, post_turn_cards
from bot.turns.streamed import Settling, closed, unshown
from tools import MAX_ITEMS, Caller, Proposal, identify_on

__all__ = ["Turn", "Typing", "answer", "post_card", "post_edited"]

log = structlog.get_logger("bot.turns.answer")


@dataclass(frozen=True, slots=True)
class Turn:
    """One message to answer.

    ``receipts`` are the delivery's dedupe keys (all must be new for the turn to run); ``marks``
    are claimed once the sender is known (Slack marks a thread as one the bot answers in).
    ``kept`` is the message's key in the inbox (``bot.runtime.inbox``) when it was kept there
    before its ack: the turn that claims the delivery takes it over and marks it answered.
    """

    installation: str
    user: str
    text: str
    conversation: str
    receipts: tuple[str, ...]
    marks: tuple[str, ...] = ()
    user_team: str | None = None
    kept: str | None = None
    # When the message arrived (``time.monotonic``), for the turn latency operators watch.
    arrived: float = field(default_factory=time.monotonic, compare=False)


class Typing:
    """One turn's typing indicator: shown only if the answer is not out in time, and cleared once.

    ``arm`` sets a timer from the message's arrival: when the answer has not been posted
    ``after`` seconds later (the turn waits for a slot, or the model is slow), the indicator is
    shown, in the task set's ``typing`` lane. An answer within that time is simply posted: no
    "working on it" put on and taken off again a moment later (two of every three Slack calls
    of a quick answer, and ``reactions.add`` is rate-limited). ``off`` settles it: the timer
    is cancelled, and the indicator is taken off only if it was put on.
    """

    def __init__(self, adapter: Adapter) -> None:
        self.adapter, self.shown = adapter, False
        self.settled = False  # the answer is out (or the turn ended): never shown from now on
        self._timer: asyncio.TimerHandle | None = None
        self._armed = False
        self._lock = asyncio.Lock()  # an "off" never overtakes the "on" still on its way

    def arm(
        self,
        tasks: Background,
        *,
        after: float,
        since: float,
        show: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        """Shows the indicator (``show``, by default ``on``) if still unanswered ``after``
        seconds past ``since`` (``time.monotonic``); a second call changes nothing."""
        if self._armed or self.settled:
            return
        self._armed = True
        shown = show or self.on

        def due() -> None:
            self._timer = None
            if not self.settled:
                tasks.spawn(shown(), name="typing", lane="typing")

        delay = max(0.0, since + after - time.monotonic())
        self._timer = asyncio.get_running_loop().call_later(delay, due)

    async def on(self) -> None:
        async with self._lock:
            if not self.shown and not self.settled:
                self.shown = True
                await self.adapter.typing(on=True)

    async def off(self) -> None:
        """Settles the indicator: never shown from now on, and taken off if it was shown."""
        self.settled = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        async with self._lock:
            if self.shown:
                self.shown = False
                await self.adapter.typing(on=False)


async def answer(
    services: Services,
    adapter: Adapter,
    turn: Turn,
    *,
    typing: Typing | None = None,
    steps: Steps | None = None,
) -> None:
    """Claims the delivery, finds the person, runs the model and posts its reply and cards.

    ``typing`` is the indicator the surface may have armed when the message arrived (it may
    have been shown while the turn waited); if not armed yet, it is armed now, from the
    message's arrival. ``steps`` is told of each tool the model calls (a status to show).
    """
    typing = typing or Typing(adapter)
    typing.arm(services.tasks, after=services.typing_after, since=turn.arrived)
    ours = True  # the delivery this turn answers; False once it turns out a duplicate
    with bound_contextvars(platform=adapter.platform, platform_user=turn.user):
        try:
            ours = await _answer(services, adapter, turn, typing, steps)
        except asyncio.CancelledError:
            ours = False  # cut off (a shutdown's drain ran out): left for another process
            raise
        except DATABASE_DOWN as unreachable:
            # With the database restarting, a message used to end in a logged traceback and
            # silence: its delivery was acknowledged, so Slack never sent it again, and the
            # person could not tell a lost message from a slow answer. Whatever the turn had
            # begun commits or rolls back whole; here the person learns to send it again.
            # A turn whose model had answered (the indicator settled) has posted its reply; it
            # is not told it was not read (its cards the database did not keep are lost).
            answered = typing.settled
            log.warning("turn_failed_database", error=type(unreachable).__name__, replied=answered)
            if not answered:
                await adapter.post(adapter.words.message_database_unreachable())
        finally:
            # A duplicate or an unlinked sender that waited was shown typing too. The turns of
            # one conversation run in order, so the delivery this one duplicates has finished.
            await typing.off()
            if ours:
                await services.inbox.answered(turn.kept, last=True)


async def _answer(
    services: Services, adapter: Adapter, turn: Turn, typing: Typing, steps: Steps | None
) -> bool:
    """Answers the turn; False when it was a duplicate delivery (another turn answers it)."""
    caller = await _claimed_caller(services, adapter, turn)
    if caller is None:
        return False
    if isinstance(caller, str):
        await adapter.post(identity.tell_unresolved(adapter, caller))
        log.info("answered_unresolved", why=caller)
        return True
    with bound_contextvars(tenant=caller.tenantid, person=caller.userid):
        async with services.turn_order.holding(turn.conversation):
            await _run(services, adapter, turn, caller, typing, steps=steps)
    services.metrics.turn_seconds.labels(platform=adapter.platform).observe(
        time.monotonic() - turn.arrived
    )
    return True


async def _claimed_caller(
    services: Services, adapter: Adapter, turn: Turn
) -> Caller | identity.Unresolved | None:
    """Claims the delivery and finds the sender, marks claimed once they are; None: a duplicate.

    The usual turn (new delivery, a linked sender of a connected installation) does it in one
    transaction: a burst spent a good share of its database time beginning and committing
    three. Any key already taken voids it all, and the turn goes the long way, one step per
    transaction as before, so what ends claimed and who is answered are the same either way.
    """
    now = services.registry.now()
    try:
        async with services.db.begin(write=True) as conn:
            await receipts.claim_on(conn, turn.receipts, now)
            await services.inbox.started_on(conn, turn.kept)
            read = await identify_on(conn, adapter.platform, turn.installation, turn.user)
            caller = identity.known(read, turn.installation, user_team=turn.user_team)
            if caller is not None:
                await receipts.mark_on(conn, turn.marks, now)
    except IntegrityError:
        return await _claimed_apart(services, adapter, turn)
    if caller is not None:
        return caller
    # Not connected, another workspace, or a first message to link: the delivery is ours.
    return await _resolved(services, adapter, turn, identified=read)


async def _claimed_apart(
    services: Services, adapter: Adapter, turn: Turn
) -> Caller | identity.Unresolved | None:
    db = services.db
    taken = await receipts.claim_all(db, turn.receipts, services.registry.now())
    if taken is not None:
        log.info("delivery_duplicate", key=taken)
        return None
    if turn.kept is not None:
        async with db.begin(write=True) as conn:
            await services.inbox.started_on(conn, turn.kept)
    return await _resolved(services, adapter, turn)


async def _resolved(
    services: Services,
    adapter: Adapter,
    turn: Turn,
    *,
    identified: tuple[int | None, Caller | None] | None = None,
) -> Caller | identity.Unresolved:
    """The sender (linked now if need be), the thread's marks claimed once they are known."""
    found = await identity.resolve(
        services.directory,
        adapter,
        turn.installation,
        turn.user,
        user_team=turn.user_team,
        identified=identified,
    )
    if not isinstance(found, str):
        now = services.registry.now()
        for key in turn.marks:
            await receipts.claim(services.db, key, now)
    return found


async def _run(
    services: Services,
    adapter: Adapter,
    turn: Turn,
    caller: Caller,
    typing: Typing,
    *,
    steps: Steps | None,
) -> None:
    stream = stream_of(adapter)
    try:
        reply = await services.assistant.reply(
            conversation=turn.conversation,
            caller=caller,
            text=turn.text,
            steps=steps,
            stream=Settling(stream, typing) if stream is not None else None,
        )
    except DATABASE_DOWN as unreachable:
        # A tool found the database down before any card was made: nothing to keep or post.
        log.warning("turn_failed_database", error=type(unreachable).__name__, replied=False)
        if stream is not None:
            await closed(stream)
        await adapter.post(adapter.words.message_database_unreachable())
        return
    except Exception:  # any model failure becomes a polite answer; logged in full
        log.exception("assistant_failed")
        if stream is not None:
            await closed(stream)
        await adapter.post(adapter.words.model_failed())
        return
    finally:
        await typing.off()
    # Kept before anything is posted: a kill while the cards go out leaves the message to
    # whoever answers it again, who finishes them (``bot.runtime.inbox``).
    try:
        kept = await services.inbox.proposed(turn.kept, [p.card_id for p in reply.proposals])
    except DATABASE_DOWN as unreachable:
        # Nothing is out yet, and its cards could not be recorded as posted either: the
        # person is told to send it again (the indicator has settled, so ``answer`` would not).
        log.warning("turn_failed_database", error=type(unreachable).__name__, replied=False)
        await adapter.post(adapter.words.message_database_unreachable())
        return
    try:
        await _post_answer(
            services,
            adapter,
            turn,
            caller,
            text=reply.text,
            proposals=reply.proposals,
            stream=stream,
        )
    except DATABASE_DOWN as unreachable:
        # The database went down while the cards went out: a card posted and not recorded, or
        # not posted under words saying it is below. With its cards kept, the message is left
        # to the sweep, which finishes them once the database is back; else nothing can, and
        # the person is told to send it again rather than wait.
        log.warning("turn_cards_cut", error=type(unreachable).__name__, left=kept)
        if kept:
            services.inbox.release(turn.kept)
        else:
            await adapter.post(adapter.words.message_database_unreachable())


async def _post_answer(
    services: Services,
    adapter: Adapter,
    turn: Turn,
    caller: Caller,
    *,
    text: str,
    proposals: Sequence[Proposal],
    stream: Stream | None,
) -> None:
    """Posts the model's words (ending its stream) and then its cards."""
    # The stream ends before anything else is posted: the cards come after the words.
    shown = await closed(stream) if stream is not None else ""
    rest = unshown(text, shown)
    posted = stream.message if shown and stream is not None else None
    if rest:
        posted = await adapter.post(adapter.words.reply(rest)) or posted
    if (shown or rest) and not proposals:
        # Answered from here on. A turn with cards is answered once they are all out: marked
        # here, a kill while they were posted left a card or a manager's copy unsent for good.
        await services.inbox.answered(turn.kept)
    log.info("answered", proposals=len(proposals), streamed=len(shown))
    # The answer is edited once its card is decided; with several cards under it, no one
    # card's decision could say what became of them all, and it is left as it is.
    above = Answer.of(posted, text)
    alone = await post_turn_cards(
        services,
        adapter,
        proposals,
        caller=caller,
        conversation=turn.conversation,
        installation=turn.installation,
        answer=above if len(proposals) <= MAX_ITEMS else None,
    )
    for proposal in alone:
        await post_card(
            services,
            adapter,
            proposal,
            caller=caller,
            conversation=turn.conversation,
            installation=turn.installation,
            answer=above if len(proposals) == 1 else None,
        )


async def post_edited(
    services: Services,
    adapter: Adapter,
    proposal: Proposal,
    *,
    caller: Caller,
    conversation: str | None,
    installation: str,
) -> None:
    """Posts the card an edit made where the old one was, shows the old one replaced, and
    tells the model what the person changed; the same on every surface."""
    await post_card(
        services,
        adapter,
        proposal,
        caller=caller,
        conversation=conversation or "",
        installation=installation,
    )
    replaced = [await services.registry.card(card_id) for card_id in proposal.replaced]
    outcome = next((r.outcome for r in replaced if r is not None and r.outcome), "")
    if conversation:
        note = wording.edited_note(caller.name or "Someone", outcome, proposal.summary)
        await services.assistant.record(conversation=conversation, text=note)
