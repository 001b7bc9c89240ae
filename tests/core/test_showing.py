"""Showing a decision, against the recording fake of the surface: every copy, one audit line."""

from __future__ import annotations

import pytest

from bot.cards import card as cards
from bot.placement import Placement
from bot.presses import sweeps
from bot.presses.decisions import show
from tests.core.conftest import Core
from tests.support.fake_surface import FakeShows, ProcessDied


async def test_every_copy_is_updated_and_one_audit_line_posted(core: Core) -> None:
    """Ravi's card went to both managers' DMs; Meera approving from hers redraws all three
    copies, posts one audit line where it was asked, and tells Ravi's conversation once."""
    thread = await core.ask("URAVI", 1)
    meera = next(c.args["copy"] for c in core.fake.called("send_copy") if c.args["to"] == "UMEERA")
    await core.press("UMEERA", meera)
    updated = [u.args["copy"].channel for u in core.fake.called("update")]
    assert sorted(updated) == sorted([thread.channel, "D-UARJUN", "D-UMEERA"])
    assert all(u.args["status"] == "done" for u in core.fake.called("update"))
    [audit] = core.fake.called("post_audit")
    assert audit.args["copy"].ts == thread.ts
    assert [c for c, _ in core.notes.heard] == ["thread-URAVI"]


async def test_a_decision_is_shown_once(core: Core) -> None:
    """Showing a decided card again (a sweep, another process's press) changes nothing: it
    was recorded shown once its copies and its line went out."""
    copy = await core.ask("UARJUN", 1)
    await core.press("UARJUN", copy)
    card_id = core.fake.called("post_card")[0].args["card"]
    card = await cards.load(core.registry, card_id)
    assert card is not None and card.shown
    calls = len(core.fake.calls)
    await show(core.services, core.fake.adapter("UARJUN"), card)
    assert core.fake.calls[calls:] == []


async def test_the_audit_line_waits_for_a_copy_that_failed(core: Core) -> None:
    """The platform failing the update of the thread's copy: no audit line yet (it would be
    posted twice when the decision is shown again), and the card stays unshown."""
    copy = await core.ask("UARJUN", 1)
    core.fake.failing.add(copy.ts)
    await core.press("UARJUN", copy)
    assert len(core.fake.called("update")) == 1
    assert core.fake.called("post_audit") == []
    card_id = core.fake.called("post_card")[0].args["card"]
    record = await core.registry.card(card_id)
    assert record is not None and record.shown_at is None


async def test_a_card_of_several_is_shown_once_settled(core: Core) -> None:
    """A card of several is recorded shown once settled: its items carry the time, and a
    press on it afterwards is refused without redrawing it or posting its line again."""
    copy = await core.ask("UARJUN", 1, 2)
    await core.press("UARJUN", copy)
    card = await cards.load(core.registry, core.fake.called("post_card")[0].args["card"])
    assert card is not None and card.several and card.shown
    calls = len(core.fake.calls)
    ended = await core.press("UARJUN", copy)
    assert ended.outcome == "refused"
    assert [c.method for c in core.fake.calls[calls:]] == ["post_privately"]
    assert len(core.fake.called("post_audit")) == 1


def _last_drawn(core: Core, copy: Placement) -> tuple[str, list[str]]:
    """What a copy shows now: its status and buttons as last updated, or live as sent."""
    updates = [u for u in core.fake.called("update") if u.args["copy"].ts == copy.ts]
    if not updates:
        return "sent", ["approve", "reject"]
    return updates[-1].args["status"], updates[-1].args["buttons"]


def _copies(core: Core) -> list[Placement]:
    """Every card and copy that went out, in order: the thread's, then the DMs."""
    sent = [c.args["copy"] for c in core.fake.called("send_copy") if c.args["copy"] is not None]
    return [*(c.args["copy"] for c in core.fake.called("post_card")), *sent]


async def _sweep(core: Core) -> int:
    return await sweeps.redraw(core.services, {"slack": FakeShows(core.fake)}, now=core.clock())


async def _is_shown(core: Core) -> bool:
    record = await core.registry.card(core.fake.called("post_card")[0].args["card"])
    assert record is not None
    return record.shown_at is not None


async def test_a_card_pressed_before_its_turn_recorded_it_is_shown_by_that_turn(core: Core) -> None:
    """Arjun approves the card the moment it is in the channel, and a sweep runs, before his
    turn records where it went: the card was recorded shown with no copy, and the channel kept
    live buttons and no audit line for good. Now the turn recording it shows the decision."""
    pressed: list[object] = []

    async def press_at_once(copy: Placement) -> None:
        pressed.append(await core.press("UARJUN", copy))
        assert await _sweep(core) == 0

    core.fake.on_post = press_at_once
    thread = await core.ask("UARJUN", 1)

    assert pressed and _last_drawn(core, thread) == ("done", [])
    [audit] = core.fake.called("post_audit")
    assert audit.args["copy"].ts == thread.ts
    assert await _is_shown(core)
    assert await _sweep(core) == 0 and len(core.fake.called("post_audit")) == 1


async def test_copies_recorded_after_the_decision_was_shown_are_drawn_decided(core: Core) -> None:
    """Arjun approves Ravi's card in the channel while the managers' copies are on their way,
    and the server sending them is killed as it draws them decided: the card had been recorded
    shown, so both DMs kept live buttons for good. Now recording them reopens the showing and
    the sweep draws them, without a second audit line. (Each copy is recorded as it is sent,
    so the server dies before sending the second: the thread's card and the first copy.)"""
    sender = await core.process()

    async def approve_in_channel(_: Placement) -> None:
        thread = core.fake.called("post_card")[0].args["copy"]
        await core.press("UARJUN", thread)
        assert await _is_shown(core)
        core.fake.dies_at = ("update", 0)  # the sender, drawing the copies it just recorded

    async def then_on_its_copies(_: Placement) -> None:
        core.fake.on_post = approve_in_channel

    core.fake.on_post = then_on_its_copies
    with pytest.raises(ProcessDied):
        await core.ask("URAVI", 1, services=sender)
    await sender.lease.stop()
    assert not await _is_shown(core)

    assert await _sweep(core) == 1

    assert [_last_drawn(core, c) for c in _copies(core)] == [("done", [])] * 2
    assert len(core.fake.called("post_audit")) == 1
    assert await _is_shown(core)


# Where the process deciding Ravi's card dies: after the decision commits (before any copy is
# updated), after the thread's copy, after every copy, after the audit line.
_DEATHS = [("update", 0), ("update", 1), ("post_audit", 0), ("noted", 0)]


@pytest.mark.parametrize("dies_at", _DEATHS, ids=lambda d: f"{d[0]}-{d[1]}")
async def test_a_decision_whose_process_died_midway_is_shown_once(
    core: Core, dies_at: tuple[str, int]
) -> None:
    """Arjun approves Ravi's card from his DM and the server deciding it is killed at a step
    of showing it: the sweep of a living server updates every copy, and the thread has its
    audit line once (the line was posted again when the kill came after it)."""
    await core.ask("URAVI", 1)
    arjun = next(c for c in _copies(core) if c.channel == "D-UARJUN")
    decider = await core.process()
    core.fake.dies_at = dies_at
    with pytest.raises(ProcessDied):
        await core.press("UARJUN", arjun, services=decider)
    await decider.lease.stop()
    assert not await _is_shown(core)

    assert await _sweep(core) == 1

    assert [_last_drawn(core, c) for c in _copies(core)] == [("done", [])] * 3
    [audit] = core.fake.called("post_audit")
    assert audit.args["copy"].ts == _copies(core)[0].ts
    assert await _is_shown(core)
    assert await _sweep(core) == 0
