"""Messages over /api/messages: identity by directory email, the unlinked, roles, token checks, submits."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp.test_utils import TestServer
from pydantic import SecretStr
from sqlalchemy import select

from bot.adapter import Steps, Stream
from bot.server import application
from tests.slack.conftest import bot_settings
from tests.support.fake_connector import Member
from tests.support.teams_activities import TEAM, TENANT, message, submit
from tests.teams.adaptive import texts
from tests.teams.conftest import ARJUN, MEERA, RAVI, STRANGER, TeamsBot
from tools import Caller
from tools.toolsets.merchant.models import BranchRequest


async def test_first_message_links_by_directory_email(teams: TeamsBot) -> None:
    """Arjun's first message looks up his email through the connector once and links him."""
    await teams.say(ARJUN, "pending requests")
    await teams.say(ARJUN, "branches")
    lookups = teams.connector.lookups()
    assert [(c.conversation, c.member) for c in lookups] == [(TEAM, ARJUN.address)]
    caller = await teams.services.directory.resolve("teams", TENANT, ARJUN.aad)
    assert caller is not None and caller.name == "Arjun Mehta"
    assert len(teams.connector.texts()) == 2


async def test_unknown_person_gets_no_data(teams: TeamsBot) -> None:
    """Someone whose email is nobody's in Countersign is told how to get linked, and shown nothing."""
    await teams.say(STRANGER, "pending requests")
    assert teams.connector.texts() == [teams.connector.texts()[0]]
    assert "don't know who you are" in teams.connector.texts()[0]
    assert "countersign link teams" in teams.connector.texts()[0]
    assert await teams.services.directory.resolve("teams", TENANT, STRANGER.aad) is None


async def test_cli_style_link_needs_no_lookup(teams: TeamsBot) -> None:
    """A person linked by `countersign link teams` is resolved without asking the connector."""
    await teams.services.directory.link("teams", TENANT, MEERA.aad, "meera@fiesta.example")
    await teams.say(MEERA, "branches")
    assert teams.connector.lookups() == []
    assert "Whitefield" in teams.connector.texts()[-1]


async def test_staff_get_a_card_that_waits_for_a_manager(teams: TeamsBot) -> None:
    """Ravi (staff) asking to approve a request is no longer refused: the card is posted, says
    it waits for a manager, and gives Ravi only Withdraw."""
    posted = await teams.card_for(RAVI, "approve request 3")
    assert texts(posted.cards[0]).startswith("Waiting for a manager: ")
    assert "Ravi Kumar" not in texts(posted.cards[0]).splitlines()[0]
    mine = await teams.refresh(RAVI, posted)
    assert [a["verb"] for a in mine.get("actions", [])] == ["withdraw"]


async def test_redelivered_message_is_answered_once(teams: TeamsBot) -> None:
    """The same activity delivered twice (a retry) gets one answer and at most one card."""
    activity = message(ARJUN, "approve request 3", service_url=teams.connector.url)
    assert (await teams.post(activity))[0] == 202
    assert (await teams.post(activity))[0] == 202
    assert len(teams.connector.card_posts()) == 1


async def test_replies_are_plain_text_in_the_thread(teams: TeamsBot) -> None:
    """Answers go to the conversation the message came from, as plain text."""
    await teams.say(ARJUN, "branches")
    reply = [c for c in teams.connector.messages() if c.body.get("text")][-1]
    assert reply.conversation.endswith(";messageid=1700000000001")
    assert reply.body["textFormat"] == "plain"


async def test_submit_fallback_approves_and_updates_the_card(teams: TeamsBot) -> None:
    """An older client's Action.Submit approves like Action.Execute: DB, card update, audit reply."""
    posted = await teams.card_for(ARJUN)
    data = {**posted.cards[0]["refresh"]["action"]["data"], "verb": "approve"}
    activity = submit(ARJUN, data, service_url=teams.connector.url, reply_to=str(posted.created))
    assert (await teams.post(activity))[0] == 202
    async with teams.services.db.session() as session:
        status = await session.scalar(select(BranchRequest.status).where(BranchRequest.id == 3))
    assert status == "approved"
    assert len(teams.connector.updates()) == 1
    assert "Approved and done" in texts(teams.connector.updates()[0].cards[0])


async def test_tampered_token_is_refused(teams: TeamsBot) -> None:
    """A press whose token is not the signed card is refused on the card and nothing runs."""
    posted = await teams.card_for(ARJUN)
    action = posted.cards[0]["refresh"]["action"]
    action["data"]["token"] = action["data"]["token"][:-4] + "AAAA"
    status, body = await teams.press(ARJUN, "approve", posted)
    assert status == 200
    assert "not valid" in texts(body["value"])
    assert teams.connector.updates() == []


async def test_without_test_auth_an_unsigned_activity_is_401(
    teams: TeamsBot, database_url: str
) -> None:
    """With a real app registration, an activity without a Bot Framework token is refused (401)."""
    settings = bot_settings(
        teams.slack,
        database_url,
        microsoft_app_id="00000000-0000-0000-0000-00000000b07a",
        microsoft_app_password=SecretStr("not-a-real-secret"),
    )
    server = TestServer(application(settings, teams.services), host="127.0.0.1")
    await server.start_server()
    try:
        activity = message(ARJUN, "branches", service_url=teams.connector.url)
        async with teams.http.post(server.make_url("/api/messages"), json=activity) as response:
            assert response.status == 401
    finally:
        await server.close()
    assert teams.connector.calls == []


async def test_a_body_that_is_not_an_activity_is_400(teams: TeamsBot) -> None:
    """Broken JSON, or JSON that is not an object, is refused with 400: never a 500, no reply."""
    url = teams.server.make_url("/api/messages")
    for body in (b"{not json", b"[1, 2]", b'"text"', b"\xff\xfe"):
        async with teams.http.post(
            url, data=body, headers={"Content-Type": "application/json"}
        ) as response:
            assert response.status == 400, body
    assert teams.connector.calls == []


class Gated:
    """The fixture's assistant, held at the door until the test opens it (a slow model)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.open = inner, asyncio.Event()

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> Any:
        await self.open.wait()
        return await self.inner.reply(
            conversation=conversation, caller=caller, text=text, steps=steps, stream=stream
        )

    async def record(self, *, conversation: str, text: str) -> None:
        await self.inner.record(conversation=conversation, text=text)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_message_is_answered_202_before_the_model_runs(teams: TeamsBot) -> None:
    """A slow model no longer holds the HTTP request (the Bot Framework gives up after ~15 s):
    the activity is answered 202 at once and the answer follows as a proactive reply."""
    gated = Gated(teams.services.assistant)
    teams.services.assistant = gated
    activity = message(ARJUN, "branches", service_url=teams.connector.url)
    url = teams.server.make_url("/api/messages")
    async with asyncio.timeout(60), teams.http.post(url, json=activity) as response:
        assert response.status == 202
    assert not any("Whitefield" in t for t in teams.connector.texts())
    gated.open.set()
    await teams.services.tasks.idle()
    reply = [c for c in teams.connector.messages() if c.body.get("text")][-1]
    assert "Whitefield" in reply.body["text"]
    assert reply.conversation == activity["conversation"]["id"]


async def test_a_member_of_another_tenant_claiming_the_owners_email_sees_nothing(
    teams: TeamsBot,
) -> None:
    """A member of another Entra tenant whose directory email is Priya's is told that tenant is
    not connected, gets no data, is not linked, and cannot close a branch."""
    other = "0badc0de-0000-4000-8000-0000000000aa"
    mallory = teams.connector.add(
        Member("29:1mallory", "aad-0666-mallory", "Mallory", "priya@fiesta.example")
    )
    for text in ("pending requests", "close branch Whitefield"):
        activity = message(mallory, text, service_url=teams.connector.url)
        activity["conversation"]["tenantId"] = other
        activity["channelData"]["tenant"]["id"] = other
        assert (await teams.post(activity))[0] == 202
    said = teams.connector.texts()
    assert len(said) == 2 and all("not connected to a merchant" in text for text in said), said
    assert teams.connector.card_posts() == []
    assert teams.connector.lookups() == []
    assert await teams.services.directory.resolve("teams", other, mallory.aad) is None


async def test_an_external_member_whose_directory_tenant_is_not_connected_is_not_linked(
    teams: TeamsBot,
) -> None:
    """In a chat of Fiesta's tenant, a member whose directory entry is of another tenant and
    carries Priya's email is told to get linked, gets no data and no card, and is not linked:
    the activity's tenant is where the chat is, not where the member is from."""
    mallory = teams.connector.add(
        Member(
            "29:1mallory",
            "aad-0666-mallory",
            "Mallory",
            "priya@fiesta.example",
            tenant="0badc0de-0000-4000-8000-0000000000aa",
        )
    )
    await teams.say(mallory, "pending requests")
    await teams.say(mallory, "close branch Whitefield")
    said = teams.connector.texts()
    assert len(said) == 2 and all("don't know who you are" in text for text in said), said
    assert teams.connector.card_posts() == []
    assert await teams.services.directory.resolve("teams", TENANT, mallory.aad) is None


async def test_a_member_of_another_tenant_of_the_same_merchant_is_linked(teams: TeamsBot) -> None:
    """A member whose directory entry is of a second tenant Fiesta connected too is linked by
    her directory email and answered."""
    second = "5ec0d0de-0000-4000-8000-00000000f1e5"
    await teams.services.directory.connections.connect("teams", second, 1)
    meera = teams.connector.add(
        Member("29:2meera", "aad-0033-meera", "Meera Iyer", "meera@fiesta.example", tenant=second)
    )
    await teams.say(meera, "branches")
    assert "Whitefield" in teams.connector.texts()[-1]
    caller = await teams.services.directory.resolve("teams", TENANT, meera.aad)
    assert caller is not None and caller.name == "Meera Iyer"
