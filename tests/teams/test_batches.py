"""One card for several writes in Teams, over signed /api/messages: one Approve, each write once."""

from __future__ import annotations

import asyncio

from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, MEERA, TeamsBot
from tests.teams.test_invoke import request_status
from tests.teams.test_routing import copy_for, routed, shown_everywhere


async def test_several_writes_are_one_card_and_approve_all_runs_each(signed: TeamsBot) -> None:
    """Arjun's "approve requests 1, 2 and 3" is one card listing the three; his refreshed view
    offers "Approve all 3"; approving runs each request once and the card says so."""
    posted = await signed.card_for(ARJUN, "approve requests 1, 2 and 3")
    card = posted.cards[0]
    validate(card)
    for number in (1, 2, 3):
        assert f"Approve request {number} — " in texts(card)
    mine = await signed.refresh(ARJUN, posted)
    validate(mine)
    assert [a["title"] for a in actions(mine)] == ["Approve all 3", "Reject all 3"]
    status, answer = await signed.press(ARJUN, "approve", posted)
    assert status == 200
    validate(answer["value"])
    assert "Approved and done" in texts(answer["value"]) and actions(answer["value"]) == []
    assert [await request_status(signed, n) for n in (1, 2, 3)] == ["approved"] * 3
    assert len([t for t in signed.connector.texts() if t.startswith("✅ Approved and done")]) == 1


async def test_a_routed_batch_is_approved_once_by_two_managers_pressing_at_once(
    signed: TeamsBot,
) -> None:
    """Ravi asks for requests 1 and 2: each manager's 1:1 chat gets the one batch card; both
    pressing Approve at the same moment approve each request exactly once, and each is
    answered with the batch card."""
    posted = await routed(signed, "approve requests 1 and 2")
    assert "Waiting for a manager" in texts(posted.cards[0])
    arjun, meera = copy_for(signed, ARJUN), copy_for(signed, MEERA)
    assert [a["title"] for a in actions(arjun.cards[0])] == ["Approve both", "Reject both"]
    answers = await asyncio.gather(
        signed.press(ARJUN, "approve", arjun, personal=True),
        signed.press(MEERA, "approve", meera, personal=True),
    )
    for status, answer in answers:
        # Whoever came second still sees the batch (with what they were told), not a blank.
        assert status == 200 and "Approve request 1 — " in texts(answer["value"])
    assert [await request_status(signed, n) for n in (1, 2)] == ["approved", "approved"]
    for cid in {r.id for r in await signed.card_store.rows() if r.batch_id}:
        rows = await signed.audit.recent(card_id=cid)
        assert [r.outcome for r in rows].count("done") == 1
    for update in shown_everywhere(signed, posted).values():
        assert "Approved and done" in texts(update.cards[0]) and actions(update.cards[0]) == []


async def test_the_first_approvers_batch_copy_keeps_no_approve(signed: TeamsBot) -> None:
    """Requests 1 and 5 need two managers: after Arjun's approval his 1:1 copy of the batch
    shows no buttons, Meera's still offers Approve all, and nothing has run yet."""
    posted = await routed(signed, "approve requests 1 and 5")
    await signed.press(ARJUN, "approve", copy_for(signed, ARJUN), personal=True)
    shown = shown_everywhere(signed, posted)
    arjun = shown[signed.connector.chat_with(ARJUN)].cards[0]
    validate(arjun)
    assert "1 of 2" in texts(arjun) and actions(arjun) == []
    meera = shown[signed.connector.chat_with(MEERA)].cards[0]
    assert [a["title"] for a in actions(meera)] == ["Approve both", "Reject both"]
    assert [await request_status(signed, n) for n in (1, 5)] == ["pending", "pending"]


async def test_reject_all_takes_the_reason_typed_on_the_card(signed: TeamsBot) -> None:
    """Reject all with a reason typed on the batch card ends every card in it with that
    reason; the requests stay as they were."""
    posted = await signed.card_for(ARJUN, "approve requests 3 and 6")
    status, answer = await signed.press(ARJUN, "reject", posted, reason="Budget is frozen")
    assert status == 200
    shown = texts(answer["value"])
    assert "Not approved" in shown and "Budget is frozen" in shown
    assert [await request_status(signed, n) for n in (3, 6)] == ["pending", "pending"]
    reasons = {r.reason for r in await signed.card_store.rows() if r.batch_id}
    assert reasons == {"Budget is frozen"}


async def test_each_line_of_several_shows_what_its_write_sends(signed: TeamsBot) -> None:
    """ "reject requests 1 and 2 because …" is one card whose every line shows the reason its
    rejection records: the requests' sentences alone never said it."""
    posted = await signed.card_for(
        ARJUN, "reject requests 1 and 2 because over this month's budget"
    )
    card = posted.cards[0]
    validate(card)
    shown = texts(card)
    assert shown.count("Rejected because: over this month's budget") == 2, shown
