"""The app's DMs in the sandbox: conversations.open, the messages in them, who sees them, presses."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from slack_bolt.request.internals import extract_channel_id, extract_thread_ts
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox import BOT_TOKEN, FIESTA_OPS, HARBOR_TEAM, WebApi, demo_workspace
from bot.sandbox.page import ACTING
from bot.sandbox.store import WorkspaceStore
from tests.sandbox.feeds import opened

Json = dict[str, Any]
CARD = [
    {"type": "header", "text": {"type": "plain_text", "text": "Approval needed"}},
    {
        "type": "actions",
        "block_id": "card:abc:1",
        "elements": [
            {
                "type": "button",
                "action_id": "approve",
                "text": {"type": "plain_text", "text": "Approve"},
                "value": "signed-token",
                "style": "primary",
            }
        ],
    },
]


@pytest.fixture
async def client(page: tuple[WebApi, TestServer]) -> AsyncIterator[AsyncWebClient]:
    """slack_sdk's own client, pointed at the sandbox's Web API with the bot token."""
    api, _ = page
    async with aiohttp.ClientSession() as session:
        yield AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)


async def _state(server: TestServer, person: str) -> Json:
    async with (
        aiohttp.ClientSession() as session,
        session.get(server.make_url("/ui/state"), params={"as": person}) as answer,
    ):
        state: Json = await answer.json()
        return state


async def test_conversations_open_gives_each_person_one_dm_with_the_app(
    page: tuple[WebApi, TestServer], client: AsyncWebClient
) -> None:
    """Opening Meera's DM twice gives the same channel, Arjun's is another, and a DM id reopens it."""
    api, _ = page
    first = await client.conversations_open(users="UMEERA")
    again = await client.conversations_open(users="UMEERA", return_im=True)
    arjun = await client.conversations_open(users="UARJUN")
    resumed = await client.conversations_open(channel=first["channel"]["id"])
    assert first["channel"]["id"] == again["channel"]["id"] == resumed["channel"]["id"]
    assert arjun["channel"]["id"] != first["channel"]["id"]
    assert again["channel"]["is_im"] is True and again["channel"]["user"] == "UMEERA"
    assert resumed["channel"]["user"] == "UMEERA"
    dm = api.workspace.channels[first["channel"]["id"]]
    assert (dm.kind, dm.members, dm.team) == ("im", {"UMEERA", "UBOT"}, "T0FIESTA")
    assert api.called("conversations.open")[0] == {"users": "UMEERA"}


@pytest.mark.parametrize(
    ("asked", "error"),
    [
        ({"users": "UNOBODY"}, "user_not_found"),
        ({"users": "UBOT"}, "cannot_dm_bot"),
        ({"users": "UARJUN,UMEERA"}, "not_supported_by_sandbox"),
        ({"users": ""}, "users_list_not_supplied"),
        ({"users": "UMEERA", "team_id": "T0NOWHERE"}, "team_not_found"),
        ({"channel": FIESTA_OPS}, "channel_not_found"),
    ],
)
async def test_conversations_open_refuses_as_slack_does(
    client: AsyncWebClient, asked: dict[str, str], error: str
) -> None:
    """A DM that cannot be opened is Slack's error, never a made-up channel."""
    with pytest.raises(SlackApiError, match=error):
        await client.api_call("conversations.open", params=asked)


async def test_a_dm_is_one_per_workspace_and_person(
    page: tuple[WebApi, TestServer], client: AsyncWebClient
) -> None:
    """Meera's DM from the Harbor installation is its own channel, stable, and shown to her only."""
    api, server = page
    own = (await client.conversations_open(users="UMEERA"))["channel"]["id"]
    harbor = await client.conversations_open(users="UMEERA", team_id=HARBOR_TEAM)
    again = await client.conversations_open(users="UMEERA", team_id=HARBOR_TEAM)
    dm = harbor["channel"]["id"]
    assert dm != own and again["channel"]["id"] == dm
    assert (harbor["already_open"], again["already_open"]) == (False, True)
    assert (api.workspace.channels[dm].team, api.workspace.channels[dm].kind) == (HARBOR_TEAM, "im")
    meera = {c["id"] for c in (await _state(server, "UMEERA"))["channels"]}
    arjun = {c["id"] for c in (await _state(server, "UARJUN"))["channels"]}
    assert {own, dm} <= meera and dm not in arjun


async def test_a_card_in_a_dm_is_its_persons_alone(
    page: tuple[WebApi, TestServer], client: AsyncWebClient
) -> None:
    """A card posted in Meera's DM is in her state and her live feed, never in Arjun's."""
    api, server = page
    dm = (await client.conversations_open(users="UMEERA"))["channel"]["id"]
    async with (
        aiohttp.ClientSession() as session,
        session.get(server.make_url("/ui/feed"), params={"as": "UARJUN"}) as arjun_feed,
        session.get(server.make_url("/ui/feed"), params={"as": "UMEERA"}) as meera_feed,
    ):
        await opened(arjun_feed)
        await opened(meera_feed)
        posted = await client.chat_postMessage(channel=dm, text="Ravi asks", blocks=CARD)
        await client.chat_postMessage(channel=FIESTA_OPS, text="for the channel")
        meera_saw = await asyncio.wait_for(_events(meera_feed, 2), 60)
        arjun_saw = await asyncio.wait_for(_events(arjun_feed, 1), 60)
    assert posted["channel"] == dm and posted["message"]["blocks"] == CARD
    assert [e["text"] for e in meera_saw] == ["Ravi asks", "for the channel"]
    assert meera_saw[0]["channel"] == dm and meera_saw[0]["blocks"] == CARD
    assert [e["text"] for e in arjun_saw] == ["for the channel"]
    meera = await _state(server, "UMEERA")
    arjun = await _state(server, "UARJUN")
    assert [m["ts"] for m in meera["messages"] if m["channel"] == dm] == [posted["ts"]]
    assert all(m["channel"] != dm for m in arjun["messages"])
    assert api.message(dm, posted["ts"]).user == "UBOT"


async def _events(feed: aiohttp.ClientResponse, count: int) -> list[Json]:
    events: list[Json] = []
    while len(events) < count:
        line = (await feed.content.readline()).decode()
        if line.startswith("data: "):
            events.append(json.loads(line.removeprefix("data: ")))
    return events


async def test_a_dm_card_is_updated_in_place_and_ephemerals_reach_members_only(
    page: tuple[WebApi, TestServer], client: AsyncWebClient
) -> None:
    """chat.update changes the DM's card where it is; an ephemeral there is for its person only."""
    api, server = page
    dm = (await client.conversations_open(users="UARJUN"))["channel"]["id"]
    posted = await client.chat_postMessage(channel=dm, text="Ravi asks", blocks=CARD)
    decided = [{"type": "header", "text": {"type": "plain_text", "text": "Approved by Meera"}}]
    updated = await client.chat_update(
        channel=dm, ts=posted["ts"], text="Approved", blocks=decided, parse="none"
    )
    assert (updated["channel"], updated["ts"]) == (dm, posted["ts"])
    card = api.message(dm, posted["ts"])
    assert (card.text, card.blocks, card.edited) == ("Approved", decided, True)
    assert [m for m in api.messages if m.channel == dm] == [card]
    await client.chat_postEphemeral(channel=dm, user="UARJUN", text="only Arjun")
    with pytest.raises(SlackApiError, match="user_not_in_channel"):
        await client.chat_postEphemeral(channel=dm, user="UMEERA", text="nobody would see it")
    with pytest.raises(SlackApiError, match="message_not_found"):
        await client.chat_update(channel=dm, ts="1.999999", text="x")
    arjun = await _state(server, "UARJUN")
    assert [m["text"] for m in arjun["messages"] if m["channel"] == dm] == [
        "Approved",
        "only Arjun",
    ]


@pytest.fixture
async def bot_stand_in(page: tuple[WebApi, TestServer]) -> AsyncIterator[list[Json]]:
    """Where the page's presses go: checks Slack's signature and keeps each payload."""
    _, server = page
    received: list[Json] = []
    verifier = SignatureVerifier("secret")  # the page fixture's signing secret

    async def events(request: web.Request) -> web.Response:
        body = await request.text()
        if not verifier.is_valid_request(body, dict(request.headers)):
            return web.Response(status=401)
        received.append(json.loads(parse_qs(body)["payload"][0]))
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/slack/events", events)
    bot = TestServer(app, host="127.0.0.1")
    await bot.start_server()
    server.app[ACTING].delivery.url = str(bot.make_url("/slack/events"))
    try:
        yield received
    finally:
        await bot.close()


async def test_pressing_in_a_dm_sends_the_payload_slack_sends_for_a_dm(
    page: tuple[WebApi, TestServer], client: AsyncWebClient, bot_stand_in: list[Json]
) -> None:
    """Meera's Approve in her DM arrives signed, naming the DM, the message and no thread; Arjun cannot press it."""
    _, server = page
    dm = (await client.conversations_open(users="UMEERA"))["channel"]["id"]
    posted = await client.chat_postMessage(channel=dm, text="Ravi asks", blocks=CARD)
    press = {"channel": dm, "ts": posted["ts"], "action_id": "approve", "block_id": "card:abc:1"}
    async with aiohttp.ClientSession() as session:
        url = server.make_url("/ui/press")
        async with session.post(url, json={"as": "UMEERA", **press}) as answer:
            assert (await answer.json())["ok"] is True
        async with session.post(url, json={"as": "UARJUN", **press}) as answer:
            assert answer.status == 400
    [payload] = bot_stand_in
    assert payload["type"] == "block_actions"
    assert payload["user"]["id"] == "UMEERA"
    assert payload["channel"] == {"id": dm, "name": "directmessage"}
    assert payload["container"] == {
        "type": "message",
        "message_ts": posted["ts"],
        "channel_id": dm,
        "is_ephemeral": False,
    }
    assert payload["message"]["ts"] == posted["ts"]
    assert payload["message"]["blocks"] == CARD
    assert payload["message"]["bot_id"] and payload["message"]["user"] == "UBOT"
    assert payload["actions"][0]["value"] == "signed-token"
    assert (extract_channel_id(payload), extract_thread_ts(payload)) == (dm, None)


async def test_a_press_in_a_thread_names_its_thread(
    page: tuple[WebApi, TestServer], client: AsyncWebClient, bot_stand_in: list[Json]
) -> None:
    """A card in a channel's thread is pressed with the thread on the message and the container."""
    _, server = page
    asked = await client.chat_postMessage(channel=FIESTA_OPS, text="approve request 1")
    card = await client.chat_postMessage(
        channel=FIESTA_OPS, thread_ts=asked["ts"], text="card", blocks=CARD
    )
    press = {"channel": FIESTA_OPS, "ts": card["ts"], "action_id": "approve"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            server.make_url("/ui/press"), json={"as": "UMEERA", "block_id": "card:abc:1", **press}
        ) as answer,
    ):
        assert answer.status == 200
    [payload] = bot_stand_in
    assert payload["channel"] == {"id": FIESTA_OPS, "name": "fiesta-ops"}
    assert payload["container"]["thread_ts"] == payload["message"]["thread_ts"] == asked["ts"]
    assert extract_thread_ts(payload) == asked["ts"]


async def test_the_app_home_still_publishes_beside_the_dms(
    page: tuple[WebApi, TestServer], client: AsyncWebClient
) -> None:
    """views.publish shows Meera her Home after her DM was opened; conversations.info knows the DM."""
    api, server = page
    dm = (await client.conversations_open(users="UMEERA"))["channel"]["id"]
    view = {"type": "home", "blocks": CARD}
    published = await client.views_publish(user_id="UMEERA", view=view)
    info = await client.conversations_info(channel=dm)
    assert info["channel"]["is_im"] is True and info["channel"]["user"] == "UMEERA"
    meera, arjun = await _state(server, "UMEERA"), await _state(server, "UARJUN")
    assert meera["home"]["id"] == published["view"]["id"]
    assert meera["home"]["blocks"] == CARD
    assert arjun["home"] is None
    assert api.workspace.dm_of("UMEERA") is api.workspace.channels[dm]


async def test_dms_and_their_cards_are_kept_across_a_restart(tmp_path: Path) -> None:
    """A DM's card, and a DM opened from another workspace, come back from the saved file."""
    workspace = demo_workspace()
    store = WorkspaceStore(tmp_path / ".countersign-sandbox.json")
    store.attach(workspace)
    harbor = workspace.open_dm("UMEERA", team=HARBOR_TEAM)
    api = WebApi(workspace)
    await api.start()
    try:
        async with aiohttp.ClientSession() as session:
            client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)
            posted = await client.chat_postMessage(channel=harbor.id, text="copy", blocks=CARD)
    finally:
        await api.stop()
    store.save()
    restored = demo_workspace()
    WorkspaceStore(store.path).load(restored)
    assert restored.message(harbor.id, posted["ts"]).blocks == CARD
    assert restored.open_dm("UMEERA", team=HARBOR_TEAM).id == harbor.id
    assert restored.channels[harbor.id].members == {"UMEERA", "UBOT"}
