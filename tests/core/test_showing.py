"""Showing a decision, against the recording fake of the surface: every copy, one audit line."""

from __future__ import annotations

from bot.cards import card as cards
from bot.presses.decisions import show
from tests.core.conftest import Core


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
    await show(core.surface, core.fake.adapter("UARJUN"), card)
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
