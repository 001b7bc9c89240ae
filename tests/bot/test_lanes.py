"""The task set's lanes: order within a conversation, bounds, and who is shown waiting."""

from __future__ import annotations

import asyncio
from functools import partial

from bot.services import Background


async def test_turns_of_one_conversation_run_one_at_a_time_in_arrival_order() -> None:
    """Two answers to one thread must not race over its history or arrive out of order."""
    tasks = Background(turns=4)
    gate = asyncio.Event()
    ran: list[str] = []
    inside = 0

    async def turn(name: str) -> None:
        nonlocal inside
        inside += 1
        assert inside == 1, "two turns of one conversation ran at once"
        await gate.wait()
        ran.append(name)
        inside -= 1

    for n in range(5):
        tasks.turn(turn(f"t{n}"), name=f"t{n}", conversation="T:C:1")
    await asyncio.sleep(0)
    assert (tasks.lanes["turn"].running, tasks.lanes["turn"].waiting) == (1, 4)
    gate.set()
    await tasks.idle()
    assert ran == ["t0", "t1", "t2", "t3", "t4"]
    assert len(tasks.conversations) == 0  # nothing kept once a conversation is quiet


async def test_turns_are_bounded_overall_and_queued_ones_are_told_at_once() -> None:
    """Past the limit turns wait; each that waits (and only those) runs its ``queued`` hook now."""
    tasks = Background(turns=2)
    gate = asyncio.Event()
    told: list[int] = []

    async def turn() -> None:
        await gate.wait()

    async def tell(n: int) -> None:
        told.append(n)

    for n in range(5):
        tasks.turn(turn(), name=f"t{n}", conversation=f"T:C:{n}", queued=partial(tell, n))
    await asyncio.wait([t for t in asyncio.all_tasks() if t.get_name().startswith("typing for")])
    assert sorted(told) == [2, 3, 4]
    assert (tasks.lanes["turn"].running, tasks.lanes["turn"].waiting) == (2, 3)
    gate.set()
    await tasks.idle()
    assert (tasks.lanes["turn"].running, tasks.lanes["turn"].waiting) == (0, 0)


async def test_a_turn_cancelled_while_queued_lets_the_next_one_in_its_conversation_go() -> None:
    """Shutdown cancels queued turns: the lane's counts return to zero and nothing is left unrun."""
    tasks = Background(turns=1)
    gate = asyncio.Event()
    done: list[str] = []

    async def turn(name: str) -> None:
        await gate.wait()
        done.append(name)

    tasks.turn(turn("first"), name="first", conversation="A")
    second = tasks.turn(turn("second"), name="second", conversation="A")
    tasks.turn(turn("third"), name="third", conversation="A")
    await asyncio.sleep(0)
    second.cancel()
    gate.set()
    await tasks.idle()
    assert done == ["first", "third"]
    assert (tasks.lanes["turn"].running, tasks.lanes["turn"].waiting) == (0, 0)
