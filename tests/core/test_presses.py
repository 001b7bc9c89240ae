"""The press ladder, against the recording fake of the surface: every way a press can end."""

from __future__ import annotations

from datetime import timedelta

from tests.core.conftest import Core
from tools import CardStatus


async def status_of(core: Core, card_id: str) -> CardStatus:
    record = await core.registry.card(card_id)
    assert record is not None
    return record.status


async def test_approve_runs_the_write_and_shows_it_once(core: Core) -> None:
    """Arjun approves his own card: it is done, its copy redrawn without buttons, one audit
    line posted, and his conversation told."""
    copy = await core.ask("UARJUN", 1)
    ended = await core.press("UARJUN", copy)
    assert ended.outcome == "decided"
    [update] = core.fake.called("update")
    assert (update.args["status"], update.args["buttons"]) == ("done", [])
    [audit] = core.fake.called("post_audit")
    assert audit.args["copy"].ts == copy.ts and audit.args["statuses"] == ["done"]
    assert [c for c, _ in core.notes.heard] == ["thread-UARJUN"]
    assert core.fake.told("UARJUN") == []


async def test_reject_ends_the_card_with_its_reason(core: Core) -> None:
    """Reject with a reason: the card is rejected, shown so, audited once, and the model hears
    the reason (so it does not propose the same again)."""
    copy = await core.ask("UARJUN", 1)
    ended = await core.press("UARJUN", copy, "reject", reason="over budget")
    assert ended.outcome == "decided"
    card_id = core.fake.called("post_card")[0].args["card"]
    assert await status_of(core, card_id) is CardStatus.REJECTED
    assert [u.args["status"] for u in core.fake.called("update")] == ["rejected"]
    assert len(core.fake.called("post_audit")) == 1
    [(_, note)] = core.notes.heard
    assert "over budget" in note


async def test_someone_elses_card_is_refused_naming_its_owner(core: Core) -> None:
    """Ravi pressing Arjun's card is told privately whose it is; nothing runs, nothing is
    redrawn, nothing is audited for the channel."""
    copy = await core.ask("UARJUN", 1)
    ended = await core.press("URAVI", copy)
    assert ended.outcome == "refused"
    assert core.fake.told("URAVI") == ["not_your_card:UARJUN"]
    assert core.fake.called("update") == [] and core.fake.called("post_audit") == []
    card_id = core.fake.called("post_card")[0].args["card"]
    assert await status_of(core, card_id) is CardStatus.PENDING


async def test_a_second_press_is_refused_and_shows_nothing_again(core: Core) -> None:
    """A double tap: the first press decides the card, the second is told who decided it and
    redraws nothing (the decision was shown already)."""
    copy = await core.ask("UARJUN", 1)
    await core.press("UARJUN", copy)
    calls = len(core.fake.calls)
    ended = await core.press("UARJUN", copy)
    assert ended.outcome == "refused"
    [told] = core.fake.told("UARJUN")
    assert told.startswith("refused:") and "already" in told
    assert [c.method for c in core.fake.calls[calls:]] == ["post_privately"]
    assert len(core.fake.called("post_audit")) == 1


async def test_an_expired_card_is_shown_expired_to_everyone(core: Core) -> None:
    """A press after the card's time ran out is refused privately, and the card is redrawn
    expired for everyone; nobody decided anything, so the channel gets no line."""
    copy = await core.ask("UARJUN", 1)
    core.clock.step(timedelta(minutes=31))
    ended = await core.press("UARJUN", copy)
    assert ended.outcome == "refused"
    assert [(u.args["status"], u.args["buttons"]) for u in core.fake.called("update")] == [
        ("expired", [])
    ]
    assert core.fake.called("post_audit") == []
    [told] = core.fake.told("UARJUN")
    assert told.startswith("refused:")


async def test_a_first_of_two_approvals_waits_for_the_second(core: Core) -> None:
    """Request 5 (₹42,000) needs two managers: Arjun's approval from his copy runs nothing,
    every copy shows "1 of 2" and his own offers him nothing more; Meera's runs it, once."""
    await core.ask("URAVI", 5)
    copies = {c.args["to"]: c.args["copy"] for c in core.fake.called("send_copy")}
    assert set(copies) == {"UARJUN", "UMEERA"}
    assert (await core.press("UARJUN", copies["UARJUN"])).outcome == "decided"
    first = core.fake.called("update")
    assert len(first) == 3 and all(u.args["status"] == "pending" for u in first)
    assert all("1 of 2" in (u.args["progress"] or "") for u in first)
    readers = {u.args["copy"].user: u.args["reader_approved"] for u in first}
    assert readers == {None: False, "UARJUN": True, "UMEERA": False}
    assert core.fake.called("post_audit") == []
    assert (await core.press("UMEERA", copies["UMEERA"])).outcome == "decided"
    card_id = core.fake.called("post_card")[0].args["card"]
    assert await status_of(core, card_id) is CardStatus.DONE
    assert len(core.fake.called("post_audit")) == 1


async def test_one_press_decides_every_write_of_a_card_of_several(core: Core) -> None:
    """ "Approve requests 1 and 2" is one card: one press runs both, each copy is redrawn once
    showing both writes, and the channel gets one line for the two."""
    copy = await core.ask("UARJUN", 1, 2)
    [posted] = core.fake.called("post_card")
    ended = await core.press("UARJUN", copy)
    assert ended.outcome == "decided"
    [update] = core.fake.called("update")
    assert update.args["card"] == posted.args["card"] and update.args["items"] == 2
    assert update.args["buttons"] == []
    [audit] = core.fake.called("post_audit")
    assert audit.args["statuses"] == ["done", "done"]
