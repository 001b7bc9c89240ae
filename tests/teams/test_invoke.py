"""Card presses over /api/messages: the card, Approve by its owner, by someone else, at once, too late."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import select

from tests.support.teams_activities import CHANNEL, TENANT
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, MEERA, TeamsBot
from tools import CardStatus
from tools.toolsets.merchant.models import BranchRequest


async def request_status(teams: TeamsBot, request_id: int) -> str:
    async with teams.services.db.session() as session:
        return str(
            await session.scalar(select(BranchRequest.status).where(BranchRequest.id == request_id))
        )


async def test_card_is_posted_with_a_refresh_for_its_owner(teams: TeamsBot) -> None:
    """'approve request 3' from Arjun posts a valid card: summary, details, refresh for Arjun only."""
    posted = await teams.card_for(ARJUN)
    card = posted.cards[0]
    validate(card)
    assert posted.conversation == CHANNEL
    assert "request 3" in texts(card).lower() or "#3" in texts(card)
    assert "Whitefield" in texts(card)
    assert texts(card).startswith("Approval needed from Arjun Mehta\n")
    assert actions(card) == []  # everyone else sees the status, not buttons
    refresh = card["refresh"]
    assert refresh["userIds"] == [ARJUN.address]
    assert refresh["action"]["type"] == "Action.Execute"
    token = refresh["action"]["data"]["token"]
    assert len(token) > 40
    assert posted.body["summary"].startswith("Arjun Mehta, please approve or reject:")
    record = await teams.registry.card(refresh["action"]["data"]["card"])
    assert record is not None and record.posting is not None
    assert {
        k: record.posting[k] for k in ("platform", "tenant", "conversation_id", "user", "aad")
    } == {
        "platform": "teams",
        "tenant": TENANT,
        "conversation_id": CHANNEL,
        "user": ARJUN.address,
        "aad": ARJUN.aad,
    }
    assert record.posting["activity_id"] == posted.created


async def test_owner_refresh_shows_execute_buttons_carrying_the_token(teams: TeamsBot) -> None:
    """Arjun's client refreshes the card and gets Approve/Edit/Reject as Action.Execute with the token."""
    posted = await teams.card_for(ARJUN)
    token = posted.cards[0]["refresh"]["action"]["data"]["token"]
    card = await teams.refresh(ARJUN, posted)
    validate(card)
    buttons = actions(card)
    assert [(b["type"], b["verb"], b["style"]) for b in buttons] == [
        ("Action.Execute", "approve", "positive"),
        ("Action.Execute", "edit", "default"),
        ("Action.Execute", "reject", "destructive"),
    ]
    assert {b["data"]["token"] for b in buttons} == {token}
    assert {b["fallback"]["data"]["verb"] for b in buttons} == {"approve", "edit", "reject"}
    assert any(e["type"] == "Input.Text" and e["id"] == "reason" for e in card["body"])


async def test_someone_elses_refresh_shows_only_the_status(teams: TeamsBot) -> None:
    """Meera refreshing Arjun's card sees, in its heading, whom it waits for, and no buttons."""
    posted = await teams.card_for(ARJUN)
    card = await teams.refresh(MEERA, posted)
    validate(card)
    assert actions(card) == []
    assert texts(card).startswith("Approval needed from Arjun Mehta\n")


async def test_approve_by_the_owner_runs_once_and_everyone_sees_it(teams: TeamsBot) -> None:
    """Arjun's Approve approves request 3, answers with the decided card, updates it, posts the audit."""
    posted = await teams.card_for(ARJUN)
    status, body = await teams.press(ARJUN, "approve", posted)
    assert status == 200
    assert await request_status(teams, 3) == "approved"
    assert body["statusCode"] == 200
    assert body["type"] == "application/vnd.microsoft.card.adaptive"
    answered = body["value"]
    validate(answered)
    assert "Approved and done" in texts(answered)
    # Said once: the outcome names who approved, so no separate "Approved by" line.
    assert texts(answered).count("Arjun Mehta") == 1
    assert "Request 3 was approved by Arjun Mehta." in texts(answered)
    assert "Outcome" not in texts(answered)
    assert actions(answered) == [] and "refresh" not in answered
    updates = teams.connector.updates()
    assert len(updates) == 1
    assert updates[0].activity_id == posted.created and updates[0].conversation == CHANNEL
    assert updates[0].cards == [answered]
    audit = [t for t in teams.connector.texts() if t.startswith("✅")]
    assert audit == [f"✅ Arjun Mehta approved: {texts(answered).splitlines()[1]}"]
    assert teams.assistant.notes[-1][0] == f"teams:{TENANT}:{CHANNEL}"
    assert "approved the card and it was done" in teams.assistant.notes[-1][1]


async def test_someone_elses_approve_is_refused_and_nothing_changes(teams: TeamsBot) -> None:
    """Meera pressing Arjun's card gets a card saying it belongs to Arjun; nothing is changed."""
    posted = await teams.card_for(ARJUN)
    status, body = await teams.press(MEERA, "approve", posted)
    assert status == 200
    answered = body["value"]
    validate(answered)
    assert (
        "This approval belongs to Arjun Mehta; only they can approve or reject it. "
        "Nothing was changed." in texts(answered)
    )
    assert await request_status(teams, 3) == "pending"
    assert teams.connector.updates() == []
    assert not [t for t in teams.connector.texts() if t.startswith("✅")]


async def test_ten_presses_at_once_execute_once(teams: TeamsBot) -> None:
    """Ten concurrent Approve invokes by Arjun approve once; one update, one audit, the rest told."""
    posted = await teams.card_for(ARJUN)
    card_id = posted.cards[0]["refresh"]["action"]["data"]["card"]
    results = await asyncio.gather(*(teams.press(ARJUN, "approve", posted) for _ in range(10)))
    assert {status for status, _ in results} == {200}
    assert await request_status(teams, 3) == "approved"
    assert len(teams.connector.updates()) == 1
    assert len([t for t in teams.connector.texts() if t.startswith("✅")]) == 1
    told = [texts(body["value"]) for _, body in results]
    assert sum("already approved by Arjun Mehta" in t for t in told) == 9
    rows = await teams.audit.recent(card_id=card_id)
    assert [r.outcome for r in rows].count("done") == 1


async def test_expired_card_says_so_and_changes_nothing(teams: TeamsBot) -> None:
    """A press after the card's time is up: nothing runs, the card says it expired, no audit reply."""
    posted = await teams.card_for(ARJUN)
    card_id = posted.cards[0]["refresh"]["action"]["data"]["card"]
    teams.clock.step(timedelta(minutes=31))
    status, body = await teams.press(ARJUN, "approve", posted)
    assert status == 200
    assert await request_status(teams, 3) == "pending"
    validate(body["value"])
    assert "Expired" in texts(body["value"]) and "Ask me again" in texts(body["value"])
    assert len(teams.connector.updates()) == 1
    assert "Expired" in texts(teams.connector.updates()[0].cards[0])
    assert not [t for t in teams.connector.texts() if t.startswith(("✅", "🚫"))]
    record = await teams.registry.card(card_id)
    assert record is not None and record.status is CardStatus.EXPIRED


async def test_reject_with_a_reason(teams: TeamsBot) -> None:
    """Arjun rejects with a reason: nothing runs, the card and the audit say why, the model is told."""
    posted = await teams.card_for(ARJUN)
    status, body = await teams.press(
        ARJUN, "reject", posted, reason="Budget is **frozen** {{DATE(x)}}"
    )
    assert status == 200
    assert await request_status(teams, 3) == "pending"
    answered = body["value"]
    validate(answered)
    assert texts(answered).startswith("Not approved\n")
    assert "Not approved by Arjun Mehta" in texts(answered)
    assert "Nothing was changed; request 3 is still pending." in texts(answered)
    assert "Rejected" not in texts(answered)
    assert "Budget is **frozen** {\u200b{DATE(x)}}" in texts(answered)
    assert len(teams.connector.updates()) == 1
    audit = [t for t in teams.connector.texts() if t.startswith("🚫")]
    assert len(audit) == 1 and audit[0].endswith("Reason: Budget is **frozen** {{DATE(x)}}")
    assert "Reason: Budget is **frozen**" in teams.assistant.notes[-1][1]
    assert "do not propose it again" in teams.assistant.notes[-1][1]


async def test_reject_line_ends_each_sentence_with_one_full_stop(teams: TeamsBot) -> None:
    """The chat's line and the model's note of a rejection read "asked by Ravi Kumar. Reason:",
    never "Ravi Kumar.. Reason:"."""
    posted = await teams.card_for(ARJUN)
    await teams.press(ARJUN, "reject", posted, reason="Over budget")
    audit = [t for t in teams.connector.texts() if t.startswith("🚫")]
    note = teams.assistant.notes[-1][1]
    assert len(audit) == 1 and ". Reason: Over budget" in audit[0]
    assert ".." not in audit[0] and ".." not in note


async def test_unexpected_failure_is_shown_on_the_card_in_the_chat_and_to_the_presser(
    teams: TeamsBot,
) -> None:
    """A write that raises an exception the engine did not expect is shown like any failure:
    the card updated for everyone without buttons, the audit reply, and the presser told."""
    from bot.placement import TeamsPlacement, stored
    from tests.engine.toy import TOY_TOOLS
    from tests.support.teams_activities import invoke
    from tools import Caller, Role
    from tools.toolsets.merchant import DEFAULT_AGENT

    teams.registry.register(next(t for t in TOY_TOOLS if t.name == "explode"))
    arjun = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
    result = await teams.registry.call(
        DEFAULT_AGENT, "explode", {"branch_id": 1, "name": "Kaboom"}, arjun
    )
    proposal = result.proposal
    assert proposal is not None
    # Posted in the channel earlier, as a message turn would have recorded it.
    placement = TeamsPlacement(
        tenant=TENANT,
        service_url=teams.connector.url,
        conversation_id=CHANNEL,
        activity_id="1700000000099",
        user=ARJUN.address,
        aad=ARJUN.aad,
        issued_to="Arjun Mehta",
        conversation=f"teams:{TENANT}:{CHANNEL}",
        token=proposal.card,
    )
    await teams.card_store.attach_posting(proposal.card_id, stored([placement]))
    data = {"token": proposal.card, "card": proposal.card_id, "verb": "approve"}
    activity = invoke(
        ARJUN, "approve", data, service_url=teams.connector.url, reply_to="1700000000099"
    )

    status, body = await teams.post(activity)

    assert status == 200
    record = await teams.registry.card(proposal.card_id)
    assert record is not None and record.status is CardStatus.FAILED
    seen = body["value"]
    validate(seen)
    assert actions(seen) == [] and "did not go through" in texts(seen)
    [update] = teams.connector.updates()
    assert update.activity_id == "1700000000099"
    assert actions(update.cards[0]) == [] and "Approved, but it failed" in texts(update.cards[0])
    assert any("approved, but it failed" in t for t in teams.connector.texts())
