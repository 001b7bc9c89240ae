"""Private copies and messages in 1:1 chats: an undeliverable copy, a note to a person, an escalation."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from structlog.testing import capture_logs

from bot.adapter import Adapter
from bot.placement import TeamsPlacement, placements_of, stored
from bot.presses import sweeps
from bot.server import RUNTIME
from bot.teams import TeamsRoutes
from tests.support.fake_connector import FakeConnector
from tests.support.teams_activities import CHANNEL, TENANT
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, MEERA, PRIYA, RAVI, TeamsBot, card_data
from tests.teams.test_routing import copy_for, routed, shown_everywhere


def routes(bot: TeamsBot) -> TeamsRoutes:
    mounted = bot.server.app[RUNTIME].mounted["teams"]
    assert isinstance(mounted, TeamsRoutes)
    return mounted


async def test_a_copy_teams_refuses_is_logged_and_the_others_still_go(signed: TeamsBot) -> None:
    """Arjun does not have the app installed, so Teams refuses his 1:1 chat (403): that is
    logged, Meera still gets her copy, and the card records only the copies that exist."""
    signed.connector.add(replace(ARJUN, installed=False))
    with capture_logs() as logs:
        posted = await routed(signed)
    refused = [e for e in logs if e["event"] == "copy_failed"]
    assert [(e["person"], e["error"]) for e in refused] == [(ARJUN.aad, "ClientResponseError")]
    assert ARJUN.aad not in signed.connector.chats
    assert copy_for(signed, MEERA).cards
    record = await signed.registry.card(card_data(posted.cards[0])["card"])
    assert record is not None
    copies = (record.posting or {})["copies"]
    assert [c["aad"] for c in copies] == [RAVI.aad, MEERA.aad]
    assert copies[1]["conversation"] is None and copies[1]["conversation_id"] == (
        signed.connector.chat_with(MEERA)
    )


async def test_notify_says_it_in_the_persons_1_1_chat(signed: TeamsBot) -> None:
    """``notify`` opens (or finds) the person's 1:1 chat by AAD object id and says the text
    there as plain text, from a proactive turn with no request behind it."""
    placement = TeamsPlacement(
        tenant=TENANT, service_url=signed.connector.url, conversation_id=CHANNEL
    )

    async def work(adapter: Adapter) -> None:
        await adapter.notify(MEERA.aad, "Request 5 is waiting for **you**.")

    assert await routes(signed).with_adapter(placement, work)
    [opened] = signed.connector.creations()
    assert opened.body["members"] == [{"id": MEERA.aad}] and opened.body["tenantId"] == TENANT
    [said] = signed.connector.in_conversation(signed.connector.chat_with(MEERA))
    assert said.body["text"] == "Request 5 is waiting for **you**."
    assert said.body["textFormat"] == "plain"


async def test_an_escalated_card_is_shown_still_pending_on_every_copy(signed: TeamsBot) -> None:
    """A routed card nobody decided is escalated by the sweep, with no request to answer: the
    channel's card and both 1:1 copies are updated, still pending and naming the owner, the
    copies keep their buttons, the channel's card its refresh for the asker, and Priya (the
    owner) gets a 1:1 copy of her own."""
    posted = await routed(signed)
    await signed.services.directory.link("teams", TENANT, PRIYA.aad, PRIYA.email or "")
    now = signed.clock() + timedelta(minutes=20)  # past the delay, within the card's 30 minutes
    runtime = signed.server.app[RUNTIME]
    assert await sweeps.escalate(signed.services, runtime.mounted, now=now, after=60) == 1
    shown = shown_everywhere(signed, posted)
    assert len(shown) == 3
    for update in shown.values():
        validate(update.cards[0])
        assert texts(update.cards[0]).startswith(
            "Waiting for a manager or the owner: Arjun Mehta, Meera Iyer or Priya Raman"
        )
        assert "please approve or reject: Approve request 1" in update.body["summary"]
    for manager in (ARJUN, MEERA):
        copy = shown[signed.connector.chat_with(manager)].cards[0]
        assert [a["verb"] for a in actions(copy)] == ["approve", "edit", "reject"]
    assert "refresh" in shown[CHANNEL].cards[0]
    [priyas] = signed.connector.in_conversation(signed.connector.chat_with(PRIYA))
    assert "Approve request 1" in priyas.body["summary"]


async def test_a_copy_on_a_service_url_this_request_did_not_vouch_for_is_left_alone(
    signed: TeamsBot,
) -> None:
    """A stored copy naming another service URL is not updated from a press (the bot's token
    goes only where the request's token vouched for): it is logged, and the others update."""
    posted = await routed(signed)
    elsewhere = FakeConnector()
    await elsewhere.start()
    try:
        card_id = card_data(posted.cards[0])["card"]
        record = await signed.registry.card(card_id)
        assert record is not None
        stray = TeamsPlacement(
            tenant=TENANT, service_url=elsewhere.url, conversation_id="a:1stray", activity_id="9"
        )
        await signed.card_store.attach_posting(card_id, stored([*placements_of(record), stray]))
        with capture_logs() as logs:
            await signed.press(MEERA, "approve", copy_for(signed, MEERA), personal=True)
    finally:
        await elsewhere.stop()
    # Neither the other URL nor, under its conversation id, the one this request came through.
    assert elsewhere.calls == [] and signed.connector.in_conversation("a:1stray") == []
    assert [e["conversation"] for e in logs if e["event"] == "card_copy_unreachable"] == [
        "a:1stray"
    ]
    assert len(shown_everywhere(signed, posted)) == 3


async def test_an_approver_never_linked_in_teams_is_found_by_email_and_gets_a_copy(
    signed: TeamsBot,
) -> None:
    """Meera never wrote to the app in Teams: the connector finds her in the tenant's
    directory by the email Countersign knows her by, so she is linked and gets her copy in
    a 1:1 chat, as Slack finds a manager by email. A Teams card used to reach only approvers
    linked beforehand."""
    await signed.services.directory.link("teams", TENANT, ARJUN.aad, ARJUN.email or "")
    await signed.card_for(RAVI, "approve request 1")
    assert copy_for(signed, MEERA).cards
    lookups = [c.member for c in signed.connector.lookups()]
    assert MEERA.email in lookups, lookups
    found = await signed.services.directory.addresses(3, "teams")
    assert found == [(TENANT, MEERA.aad)]
