"""The Web API stand-in answers like Slack, and the page shows each person only what is theirs."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox import BOT_TOKEN, FIESTA_OPS, Message, WebApi, start_sandbox
from bot.sandbox.page import STATIC
from tests.sandbox.feeds import opened


async def test_auth_test_answers_for_the_fiesta_workspace(page: tuple[WebApi, TestServer]) -> None:
    """slack_sdk's own client gets the team and the bot user from auth.test."""
    api, _ = page
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)
        answer = await client.auth_test()
        assert (answer["team_id"], answer["user_id"]) == ("T0FIESTA", "UBOT")
        wrong = AsyncWebClient(token="xoxb-wrong", base_url=api.base_url, session=session)
        with pytest.raises(SlackApiError, match="invalid_auth"):
            await wrong.auth_test()


async def test_posting_to_a_user_lands_in_their_dm(page: tuple[WebApi, TestServer]) -> None:
    """chat.postMessage with a user id as the channel posts in that person's DM with the app."""
    api, _ = page
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)
        answer = await client.chat_postMessage(channel="UMEERA", text="hello")
    assert answer["channel"] == "DMEERA"
    assert api.message("DMEERA", answer["ts"]).text == "hello"


async def test_the_state_hides_other_peoples_ephemeral_messages(
    page: tuple[WebApi, TestServer],
) -> None:
    """Arjun's ephemeral message is in Arjun's state and absent from Meera's."""
    api, server = page
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)
        await client.chat_postEphemeral(channel=FIESTA_OPS, user="UARJUN", text="just for Arjun")
        async with session.get(server.make_url("/ui/state"), params={"as": "UARJUN"}) as r:
            arjun = await r.json()
        async with session.get(server.make_url("/ui/state"), params={"as": "UMEERA"}) as r:
            meera = await r.json()
    assert [m["text"] for m in arjun["messages"]] == ["just for Arjun"]
    assert arjun["messages"][0]["ephemeral"] is True
    assert meera["messages"] == []


async def test_the_live_feed_streams_only_what_the_viewer_may_see(
    page: tuple[WebApi, TestServer],
) -> None:
    """Meera's event stream carries the channel's new message but not Arjun's ephemeral one."""
    api, server = page
    async with (
        aiohttp.ClientSession() as session,
        session.get(server.make_url("/ui/feed"), params={"as": "UMEERA"}) as feed,
    ):
        assert feed.headers["Content-Type"].startswith("text/event-stream")
        await opened(feed)
        api.workspace.post(_bot_message(api, ephemeral_to="UARJUN", text="secret"))
        api.workspace.post(_bot_message(api, ephemeral_to=None, text="for everyone"))
        seen = await asyncio.wait_for(_read_events(feed, 1), 60)
    assert len(seen) == 1 and '"for everyone"' in seen[0] and "secret" not in seen[0]


async def test_the_feed_starts_with_what_changed_after_the_page_read_its_state(
    page: tuple[WebApi, TestServer],
) -> None:
    """A card posted after the page read ``/ui/state`` but before its stream connected is in the
    stream's first event: the page never misses it (a DM copy sent in that gap once did)."""
    api, server = page
    async with aiohttp.ClientSession() as session:
        before = await (
            await session.get(server.make_url("/ui/state"), params={"as": "UMEERA"})
        ).json()
        api.workspace.post(_bot_message(api, ephemeral_to=None, text="in the gap"))
        async with session.get(server.make_url("/ui/feed"), params={"as": "UMEERA"}) as feed:
            whole = await asyncio.wait_for(opened(feed), 60)
    assert "in the gap" not in [m["text"] for m in before["messages"]]
    assert "in the gap" in [m["text"] for m in whole["messages"]]
    assert whole["me"]["id"] == "UMEERA"


def _bot_message(api: WebApi, *, ephemeral_to: str | None, text: str) -> Message:
    return Message(
        channel=FIESTA_OPS,
        ts=api.workspace.next_ts(),
        text=text,
        user="UBOT",
        ephemeral_to=ephemeral_to,
    )


async def _read_events(feed: aiohttp.ClientResponse, count: int) -> list[str]:
    events: list[str] = []
    while len(events) < count:
        line = (await feed.content.readline()).decode()
        if line.startswith("data: "):
            events.append(line)
    return events


async def test_the_page_takes_json_from_known_people_only(page: tuple[WebApi, TestServer]) -> None:
    """A form post (another site's), broken JSON, an unknown person and the bot are all refused."""
    _, server = page
    async with aiohttp.ClientSession() as session:
        url = server.make_url("/ui/say")
        form = {"as": "UARJUN", "channel": FIESTA_OPS, "text": "hi"}
        async with session.post(url, data=form) as r:
            assert r.status == 415
        async with session.post(url, json={**form, "as": "UNOBODY"}) as r:
            assert r.status == 400
        async with session.post(url, json={**form, "as": "UBOT"}) as r:
            assert r.status == 400
        async with session.post(url, json={**form, "as": "USAM"}) as r:
            assert r.status == 400  # Sam is not in Fiesta's channel
        json_type = {"Content-Type": "application/json"}
        for broken in (b"{not json", b"\xff\xfe", b"[1]"):
            async with session.post(url, data=broken, headers=json_type) as r:
                assert r.status == 400, broken
        async with session.get(server.make_url("/static/..%2Fwebapi.py")) as r:
            assert r.status == 404


def test_the_page_never_writes_html_from_strings() -> None:
    """No script in the page uses innerHTML or its kin: untrusted text only ever becomes text nodes."""
    risky = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function"
    )
    scripts = list(Path(STATIC).glob("*.js"))
    assert len(scripts) == 5
    for script in scripts:
        code = "\n".join(
            line for line in script.read_text().splitlines() if not line.lstrip().startswith("//")
        )
        assert not risky.search(code), script.name


async def test_the_sandbox_listens_on_loopback_and_takes_the_next_free_port() -> None:
    """With 3000-ish taken, the sandbox binds 127.0.0.1 on the next port up."""
    blocker = web.AppRunner(web.Application())
    await blocker.setup()
    site = web.TCPSite(blocker, "127.0.0.1", 0)
    await site.start()
    taken = blocker.addresses[0][1]
    sandbox = await start_sandbox(
        host="127.0.0.1", port=taken, bot_events="http://127.0.0.1:9/x", secret="s", token="xoxb-t"
    )
    try:
        assert sandbox.url.startswith("http://127.0.0.1:")
        bound = list(sandbox.runner.addresses)
        assert bound and all(address[0] == "127.0.0.1" for address in bound)
        assert bound[0][1] > taken
    finally:
        await sandbox.stop()
        await blocker.cleanup()
