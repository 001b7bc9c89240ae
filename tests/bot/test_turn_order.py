"""Turn holds: one turn per conversation across processes, and no thread held for ever by the dead."""

from __future__ import annotations

import asyncio

from sqlalchemy import func, insert, select, text
from structlog.testing import capture_logs

from bot.runtime.turn_order import HOLD_LIMIT, TurnOrder
from tests.reliability.harness import wait_until
from tests.support.clock import SteppedClock
from tools.cards.lease import ProcessLease
from tools.db import Database, TurnHoldRow

THREAD = "T0FIESTA:C0OPS:1800000000.000001"


def _process(db: Database, clock: SteppedClock, *, wait_limit: float = 30.0) -> TurnOrder:
    """A turn order as one process has it: its own lease."""
    return TurnOrder(db, ProcessLease(db, clock=clock), clock=clock, wait_limit=wait_limit)


async def _holds(db: Database) -> int:
    async with db.begin() as conn:
        return int((await conn.scalar(select(func.count()).select_from(TurnHoldRow))) or 0)


async def test_a_second_process_waits_for_the_hold_then_runs(db: Database) -> None:
    """While one process's turn holds a thread, another's waits; it runs once the first ends,
    and nothing is left held."""
    clock = SteppedClock()
    one, other = _process(db, clock), _process(db, clock)
    ran: list[str] = []

    async def second() -> None:
        async with other.holding(THREAD):
            ran.append("second")

    async with one.holding(THREAD):
        waiting = asyncio.create_task(second())
        await asyncio.sleep(0.5)
        assert ran == [] and not waiting.done()
        ran.append("first")
    await asyncio.wait_for(waiting, 10)
    assert ran == ["first", "second"]
    assert await _holds(db) == 0


async def test_other_conversations_do_not_wait(db: Database) -> None:
    """A hold is per conversation: another thread's turn runs at once."""
    clock = SteppedClock()
    one, other = _process(db, clock), _process(db, clock)
    async with one.holding(THREAD):
        await asyncio.wait_for(_enter(other, THREAD + "2"), 5)


async def _enter(order: TurnOrder, conversation: str) -> None:
    async with order.holding(conversation):
        pass


async def test_the_hold_of_a_stopped_process_is_taken_over(db: Database) -> None:
    """A process that stopped (or died) mid-turn does not keep its thread: the next turn
    takes the hold over at once and says so."""
    clock = SteppedClock()
    dead_lease = ProcessLease(db, clock=clock)
    dead = TurnOrder(db, dead_lease, clock=clock)
    await dead_lease.start()
    await dead._take(THREAD, "1" * 32)  # its turn began, and then the process went away
    await dead_lease.stop()
    with capture_logs() as logs:
        await asyncio.wait_for(_enter(_process(db, clock), THREAD), 5)
    assert [e["holder"] for e in logs if e["event"] == "turn_hold_taken_over"] == [
        dead_lease.holder
    ]
    assert await _holds(db) == 0


async def test_a_live_process_keeps_its_hold_until_it_outlasts_any_turn(db: Database) -> None:
    """A hold whose process still beats is waited for; once older than any turn can run, it
    is taken over all the same."""
    clock = SteppedClock()
    lease = ProcessLease(db, clock=clock)
    await lease.start()
    await TurnOrder(db, lease, clock=clock)._take(THREAD, "1" * 32)
    waiting = asyncio.create_task(_enter(_process(db, clock), THREAD))
    await asyncio.sleep(0.5)
    assert not waiting.done()
    clock.step(HOLD_LIMIT)
    await lease.beat()  # still alive: only the hold's age lets the next turn in
    await asyncio.wait_for(waiting, 5)


async def test_a_turn_that_waits_too_long_runs_anyway_and_says_so(db: Database) -> None:
    """Past the wait limit the turn runs without the hold (the other's hold is left alone)."""
    clock = SteppedClock()
    await _process(db, clock)._take(THREAD, "1" * 32)
    impatient = _process(db, clock, wait_limit=0.3)
    with capture_logs() as logs:
        await asyncio.wait_for(_enter(impatient, THREAD), 5)
    assert [e["event"] for e in logs] == ["turn_hold_waited_out"]
    assert await _holds(db) == 1


async def test_a_hold_that_cannot_be_handed_on_is_logged(db: Database) -> None:
    """The database refusing the hand-on when the turn ends: logged in full, not raised over
    the turn's own outcome."""
    order = _process(db, SteppedClock())
    with capture_logs() as logs:
        async with order.holding(THREAD), db.begin(write=True) as conn:
            await conn.execute(text("DROP TABLE turn_holds"))
    [event] = [e for e in logs if e["event"] == "turn_hold_not_handed_on"]
    assert event["log_level"] == "error" and event["exc_info"] is True


async def _holders(db: Database) -> list[str]:
    async with db.begin() as conn:
        return list((await conn.scalars(select(TurnHoldRow.holder))).all())


async def _held_by(db: Database, lease: ProcessLease) -> None:
    async def held() -> bool:
        return await _holders(db) == [lease.holder]

    await wait_until(held, seconds=10, what=f"the hold taken by {lease.holder}")


async def test_a_late_hand_on_leaves_the_next_turns_hold_alone(db: Database) -> None:
    """A turn whose hold was taken over as stale ends later: its hand-on removes only its own
    hold, never the turn that took over, which still keeps others out."""
    clock = SteppedClock()
    first_lease, next_lease = ProcessLease(db, clock=clock), ProcessLease(db, clock=clock)
    await first_lease.start()
    first, then = TurnOrder(db, first_lease, clock=clock), TurnOrder(db, next_lease, clock=clock)
    first_done, then_done = asyncio.Event(), asyncio.Event()

    async def hold(order: TurnOrder, done: asyncio.Event) -> None:
        async with order.holding(THREAD):
            await done.wait()

    first_turn = asyncio.create_task(hold(first, first_done))
    await _held_by(db, first_lease)
    await first_lease.stop()  # its process looks gone while its turn is still running
    next_turn = asyncio.create_task(hold(then, then_done))
    await _held_by(db, next_lease)
    first_done.set()
    await asyncio.wait_for(first_turn, 5)
    assert await _holders(db) == [next_lease.holder]
    then_done.set()
    await asyncio.wait_for(next_turn, 5)
    assert await _holders(db) == []


async def test_a_hold_this_process_left_behind_is_taken_over_at_once(db: Database) -> None:
    """A hold under this process's own lease that no turn here holds (its hand-on failed) does
    not make the thread's next turn wait."""
    clock = SteppedClock()
    lease = ProcessLease(db, clock=clock)
    left = {"conversation": THREAD, "turn": "0" * 32, "holder": lease.holder, "since": clock()}
    async with db.begin(write=True) as conn:
        await conn.execute(insert(TurnHoldRow), left)
    with capture_logs() as logs:
        await asyncio.wait_for(_enter(TurnOrder(db, lease, clock=clock), THREAD), 5)
    assert [e["event"] for e in logs] == ["turn_hold_taken_over"]
    assert await _holds(db) == 0


async def test_a_turn_runs_without_the_hold_when_the_database_cannot_be_asked(
    db: Database,
) -> None:
    """Taking the hold fails (here: its table is gone): the turn still runs, and the log says
    why it ran without it."""
    async with db.begin(write=True) as conn:
        await conn.execute(text("DROP TABLE turn_holds"))
    ran = False
    with capture_logs() as logs:
        async with _process(db, SteppedClock()).holding(THREAD):
            ran = True
    assert ran
    assert [e["event"] for e in logs] == ["turn_hold_unavailable"]
