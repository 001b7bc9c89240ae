"""A card needing two managers (request 5, ₹42,000), over signed /api/messages: 1 of 2, then done, once."""

from __future__ import annotations

import asyncio

from tests.support.fake_connector import Call
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, MEERA, RAVI, TeamsBot, card_data
from tests.teams.test_invoke import request_status
from tests.teams.test_routing import copy_for, routed, shown_everywhere
from tools import CardStatus

FIRST = "Approved by Arjun Mehta, 1 of 2; waiting for a second manager."


async def done_count(bot: TeamsBot, posted: Call) -> int:
    rows = await bot.audit.recent(card_id=card_data(posted.cards[0])["card"])
    return [r.outcome for r in rows].count("done")


async def test_the_first_approval_is_one_of_two_and_the_second_runs_it(signed: TeamsBot) -> None:
    """Arjun's approval of request 5 is shown as 1 of 2 on every copy while the request stays
    pending and Meera keeps her buttons; Arjun cannot be the second; Meera's approval runs it."""
    posted = await routed(signed, "approve request 5")
    assert "Needs 2 approvals from different people." in texts(posted.cards[0])

    _, first = await signed.press(ARJUN, "approve", copy_for(signed, ARJUN), personal=True)
    answered = first["value"]
    validate(answered)
    assert FIRST in texts(answered) and actions(answered) == []
    assert await request_status(signed, 5) == "pending"
    shown = shown_everywhere(signed, posted)
    assert len(shown) == 3
    for update in shown.values():
        validate(update.cards[0])
        assert FIRST in texts(update.cards[0])
        assert not texts(update.cards[0]).splitlines()[0].endswith("Arjun Mehta")
    meera = shown[signed.connector.chat_with(MEERA)].cards[0]
    assert [a["verb"] for a in actions(meera)] == ["approve", "edit", "reject"]
    assert shown[posted.conversation].cards[0]["refresh"]["userIds"] == [RAVI.address]
    assert not [t for t in signed.connector.texts() if t.startswith("✅")]

    # Opening their copies, Arjun (who approved) sees the status and Meera still her buttons.
    arjun_now = await signed.refresh(ARJUN, copy_for(signed, ARJUN), personal=True)
    meera_now = await signed.refresh(MEERA, copy_for(signed, MEERA), personal=True)
    assert actions(arjun_now) == [] and FIRST in texts(arjun_now)
    assert [a["verb"] for a in actions(meera_now)] == ["approve", "edit", "reject"]

    _, again = await signed.press(ARJUN, "approve", copy_for(signed, ARJUN), personal=True)
    assert "You have already approved this card" in texts(again["value"])
    assert await request_status(signed, 5) == "pending"

    _, second = await signed.press(MEERA, "approve", copy_for(signed, MEERA), personal=True)
    assert "Approved and done" in texts(second["value"])
    assert await request_status(signed, 5) == "approved"
    assert await done_count(signed, posted) == 1
    for update in shown_everywhere(signed, posted).values():
        assert "Approved and done" in texts(update.cards[0]) and actions(update.cards[0]) == []
    assert len([t for t in signed.connector.texts() if t.startswith("✅")]) == 1


async def test_the_first_approvers_own_copy_keeps_no_approve(signed: TeamsBot) -> None:
    """After Arjun's first of two approvals, his 1:1 copy as stored for every device of his
    shows "1 of 2" with no buttons; Meera's keeps Approve, Edit and Reject."""
    posted = await routed(signed, "approve request 5")
    await signed.press(ARJUN, "approve", copy_for(signed, ARJUN), personal=True)
    shown = shown_everywhere(signed, posted)
    arjun = shown[signed.connector.chat_with(ARJUN)].cards[0]
    validate(arjun)
    assert FIRST in texts(arjun) and actions(arjun) == []
    meera = shown[signed.connector.chat_with(MEERA)].cards[0]
    assert [a["verb"] for a in actions(meera)] == ["approve", "edit", "reject"]


async def test_both_first_approvals_at_once_run_the_write_once(signed: TeamsBot) -> None:
    """Arjun and Meera both approving request 5 at the same moment, each as if first: one of
    them is the second approval, and the write runs exactly once."""
    posted = await routed(signed, "approve request 5")
    arjun, meera = copy_for(signed, ARJUN), copy_for(signed, MEERA)
    await asyncio.gather(
        signed.press(ARJUN, "approve", arjun, personal=True),
        signed.press(MEERA, "approve", meera, personal=True),
    )
    assert await request_status(signed, 5) == "approved"
    assert await done_count(signed, posted) == 1
    record = await signed.registry.card(card_data(posted.cards[0])["card"])
    assert record is not None and record.status is CardStatus.DONE
    assert {a.name for a in record.approvals} == {"Arjun Mehta", "Meera Iyer"}
    assert len([t for t in signed.connector.texts() if t.startswith("✅")]) == 1
