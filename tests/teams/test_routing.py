"""A staff member's card routed to the managers, over signed /api/messages: copies, presses, withdraw, reject."""

from __future__ import annotations

import asyncio

from bot.cards.wording import who
from tests.support.fake_connector import Call, Member
from tests.support.teams_activities import BOT, CHANNEL, TENANT, submit
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, MEERA, RAVI, TeamsBot, card_data
from tests.teams.test_invoke import request_status
from tools import CardStatus


async def approvers(bot: TeamsBot, posted: Call) -> str:
    """Whom the engine issued the card to, as the card names them ("…, Arjun Mehta or Meera
    Iyer"): the policy's decision, which the Teams card must show as it is."""
    record = await bot.registry.card(card_data(posted.cards[0])["card"])
    assert record is not None
    names = tuple(i.name for i in record.issued_to)
    assert {"Arjun Mehta", "Meera Iyer"} <= set(names) and "Ravi Kumar" not in names
    return who(names)


async def routed(bot: TeamsBot, text: str = "approve request 1") -> Call:
    """Arjun and Meera are linked in the tenant; Ravi (staff) asks in the channel."""
    for manager in (ARJUN, MEERA):
        await bot.services.directory.link("teams", TENANT, manager.aad, manager.email or "")
    return await bot.card_for(RAVI, text)


def copy_for(bot: TeamsBot, member: Member) -> Call:
    """The card the bot sent in ``member``'s 1:1 chat."""
    chat = bot.connector.chat_with(member)
    [card] = [c for c in bot.connector.in_conversation(chat) if c.method == "POST" and c.cards]
    return card


def shown_everywhere(bot: TeamsBot, posted: Call) -> dict[str, Call]:
    """The last update of each copy (the channel's card and both 1:1 copies), by conversation."""
    copies = [posted, copy_for(bot, ARJUN), copy_for(bot, MEERA)]
    found: dict[str, Call] = {}
    for update in bot.connector.updates():
        if any(
            (update.conversation, update.activity_id) == (c.conversation, c.created) for c in copies
        ):
            found[update.conversation] = update
    return found


async def test_a_staff_request_waits_for_a_manager_and_each_gets_a_private_copy(
    signed: TeamsBot,
) -> None:
    """Ravi's 'approve request 1' is not refused: the card says it waits for a manager, and a
    1:1 chat is opened with Arjun and with Meera (by AAD object id) carrying it with buttons."""
    posted = await routed(signed)
    card = posted.cards[0]
    validate(card)
    waiting = f"Waiting for a manager: {await approvers(signed, posted)}"
    assert texts(card).startswith(f"{waiting}\n")
    assert actions(card) == [] and card["refresh"]["userIds"] == [RAVI.address]
    opened = signed.connector.creations()
    assert [c.body["members"] for c in opened] == [[{"id": ARJUN.aad}], [{"id": MEERA.aad}]]
    for call in opened:
        assert call.body["isGroup"] is False and call.body["tenantId"] == TENANT
        assert call.body["bot"]["id"] == BOT["id"]
    token = card_data(card)["token"]
    for manager in (ARJUN, MEERA):
        copy = copy_for(signed, manager)
        validate(copy.cards[0])
        assert texts(copy.cards[0]).startswith(f"{waiting}\n")
        assert [a["verb"] for a in actions(copy.cards[0])] == ["approve", "edit", "reject"]
        assert {a["data"]["token"] for a in actions(copy.cards[0])} == {token}
        assert copy.body["summary"].startswith("Ravi Kumar needs your approval: Approve request 1")
        assert copy.cards[0]["refresh"]["userIds"] == [manager.address]
    record = await signed.registry.card(card_data(card)["card"])
    assert record is not None
    copies = (record.posting or {})["copies"]
    assert [(c["aad"], c["user"], c["issued_to"]) for c in copies[1:]] == [
        (ARJUN.aad, ARJUN.address, "Arjun Mehta"),
        (MEERA.aad, MEERA.address, "Meera Iyer"),
    ]
    assert [c["conversation"] for c in copies[1:]] == [None, None]


async def test_the_asker_sees_withdraw_and_a_manager_sees_approve(signed: TeamsBot) -> None:
    """Refreshing the channel's card, Ravi gets Withdraw only and Arjun Approve, Edit and Reject."""
    posted = await routed(signed)
    ravi, arjun = await signed.refresh(RAVI, posted), await signed.refresh(ARJUN, posted)
    assert [a["verb"] for a in actions(ravi)] == ["withdraw"]
    assert [a["verb"] for a in actions(arjun)] == ["approve", "edit", "reject"]


async def test_a_manager_approves_from_her_copy_once_and_every_copy_shows_it(
    signed: TeamsBot,
) -> None:
    """Meera's Approve in her 1:1 chat approves request 1 once; the channel's card and both
    copies are updated, the channel gets the audit line, and Arjun's later press is refused."""
    posted = await routed(signed)
    status, body = await signed.press(MEERA, "approve", copy_for(signed, MEERA), personal=True)
    assert status == 200 and "Approved and done" in texts(body["value"])
    assert await request_status(signed, 1) == "approved"
    shown = shown_everywhere(signed, posted)
    assert len(shown) == 3 and len(signed.connector.updates()) == 3
    for update in shown.values():
        validate(update.cards[0])
        assert "Approved and done" in texts(update.cards[0]) and actions(update.cards[0]) == []
    audit = [c for c in signed.connector.messages() if str(c.body.get("text")).startswith("✅")]
    assert [c.conversation for c in audit] == [CHANNEL]
    assert audit[0].body["text"].startswith("✅ Meera Iyer approved:")

    _, late = await signed.press(ARJUN, "approve", copy_for(signed, ARJUN), personal=True)
    assert "already approved by Meera Iyer" in texts(late["value"])
    rows = await signed.audit.recent(card_id=card_data(posted.cards[0])["card"])
    assert [r.outcome for r in rows].count("done") == 1


async def test_a_late_press_is_told_when_in_the_merchants_zone(signed: TeamsBot) -> None:
    """Arjun pressing after Meera approved is told when in Fiesta Foods' zone, named: Teams'
    plain words show no reader their own zone, and "at 2026-12-01 20:19 UTC" meant nothing to
    a shop in Bengaluru."""
    await routed(signed)
    await signed.press(MEERA, "approve", copy_for(signed, MEERA), personal=True)
    _, late = await signed.press(ARJUN, "approve", copy_for(signed, ARJUN), personal=True)
    told = texts(late["value"])
    assert "already approved by Meera Iyer at " in told and " Asia/Kolkata." in told, told
    assert "UTC" not in told


async def test_the_asker_pressing_approve_is_refused(signed: TeamsBot) -> None:
    """Ravi sending Approve on his own routed card is told who decides it; nothing changes."""
    posted = await routed(signed)
    status, body = await signed.press(RAVI, "approve", posted)
    assert status == 200
    owners = await approvers(signed, posted)
    assert f"This approval belongs to {owners}; only they can approve or reject it." in texts(
        body["value"]
    )
    assert await request_status(signed, 1) == "pending"
    assert signed.connector.updates() == []


async def test_two_managers_approving_at_once_execute_once(signed: TeamsBot) -> None:
    """Arjun and Meera pressing Approve in their chats at the same moment approve request 1
    once: one audit line in the channel, one 'done', the other told who was first."""
    posted = await routed(signed)
    arjun, meera = copy_for(signed, ARJUN), copy_for(signed, MEERA)
    results = await asyncio.gather(
        signed.press(ARJUN, "approve", arjun, personal=True),
        signed.press(MEERA, "approve", meera, personal=True),
    )
    assert await request_status(signed, 1) == "approved"
    told = [texts(body["value"]) for _, body in results]
    assert sum("already approved by" in t for t in told) == 1
    assert sum("Approved and done" in t and "already" not in t for t in told) == 1
    audit = [t for t in signed.connector.texts() if t.startswith("✅")]
    assert len(audit) == 1
    rows = await signed.audit.recent(card_id=card_data(posted.cards[0])["card"])
    assert [r.outcome for r in rows].count("done") == 1


async def test_the_asker_withdraws_and_every_copy_says_so(signed: TeamsBot) -> None:
    """Ravi's Withdraw ends the card: nothing runs, and every copy says it was withdrawn and
    that request 1 is still pending, with no buttons left."""
    posted = await routed(signed)
    status, body = await signed.press(RAVI, "withdraw", posted)
    assert status == 200 and "Withdrawn" in texts(body["value"])
    assert await request_status(signed, 1) == "pending"
    record = await signed.registry.card(card_data(posted.cards[0])["card"])
    assert record is not None and record.status is CardStatus.WITHDRAWN
    shown = shown_everywhere(signed, posted)
    assert len(shown) == 3
    for update in shown.values():
        card = update.cards[0]
        assert texts(card).startswith("Withdrawn\n") and "Withdrawn by Ravi Kumar" in texts(card)
        assert "Nothing was changed; request 1 is still pending." in texts(card)
        assert actions(card) == [] and "refresh" not in card


async def test_withdraw_by_someone_else_is_refused(signed: TeamsBot) -> None:
    """Meera pressing Withdraw (crafted from her copy's data) is refused; the card still waits."""
    posted = await routed(signed)
    _, body = await signed.press(MEERA, "withdraw", copy_for(signed, MEERA), personal=True)
    assert "Only the person who asked for this card can withdraw it." in texts(body["value"])
    record = await signed.registry.card(card_data(posted.cards[0])["card"])
    assert record is not None and record.status is CardStatus.PENDING
    assert signed.connector.updates() == []


async def test_a_card_not_approved_says_what_still_stands(signed: TeamsBot) -> None:
    """Arjun's Reject from his copy: every copy says 'Not approved', by whom, that nothing was
    changed and request 1 is still pending, the reason, and no 'pending → approved'."""
    posted = await routed(signed)
    await signed.press(
        ARJUN, "reject", copy_for(signed, ARJUN), reason="Over budget", personal=True
    )
    assert await request_status(signed, 1) == "pending"
    shown = shown_everywhere(signed, posted)
    assert len(shown) == 3
    for update in shown.values():
        seen = texts(update.cards[0])
        assert seen.startswith("Not approved\n") and "Not approved by Arjun Mehta" in seen
        assert "Nothing was changed; request 1 is still pending." in seen
        assert "Reason: Over budget" in seen
        assert "→" not in seen and "pending (approved was proposed)" in seen
        assert update.body["summary"].startswith("Not approved (Arjun Mehta)")
    audit = [c for c in signed.connector.messages() if str(c.body.get("text")).startswith("🚫")]
    assert [c.conversation for c in audit] == [CHANNEL]


async def test_an_older_clients_withdraw_submit_withdraws(signed: TeamsBot) -> None:
    """A client without Universal Actions sends Withdraw as an Action.Submit message with the
    same data: the card is withdrawn and shown so on every copy."""
    posted = await routed(signed)
    asker = await signed.refresh(RAVI, posted)
    [withdraw] = actions(asker)
    data = withdraw["fallback"]["data"]
    assert data["verb"] == "withdraw"
    activity = submit(RAVI, data, service_url=signed.connector.url, reply_to=str(posted.created))
    assert (await signed.post(activity))[0] == 202
    record = await signed.registry.card(data["card"])
    assert record is not None and record.status is CardStatus.WITHDRAWN
    shown = shown_everywhere(signed, posted)
    assert len(shown) == 3
    assert all(texts(u.cards[0]).startswith("Withdrawn\n") for u in shown.values())
