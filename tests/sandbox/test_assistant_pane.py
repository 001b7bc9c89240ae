"""The sandbox's assistant pane: a thread started from the page over the real bot, its status
told live to its person alone, feedback presses checked, titles kept across a restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from slack_sdk.web.async_client import AsyncWebClient
from structlog.testing import capture_logs

from bot.sandbox import BOT_TOKEN, FIESTA_OPS, WebApi, Workspace
from bot.sandbox.store import WorkspaceStore
from tests.sandbox.conftest import Stack
from tests.sandbox.feeds import event, opened

_NEVER = 60.0  # a safety net so a missing event fails the test instead of hanging it


@pytest.fixture
async def client(page: tuple[WebApi, TestServer]) -> AsyncIterator[AsyncWebClient]:
    """slack_sdk's own client, as the app, on the sandbox's Web API."""
    api, _ = page
    async with aiohttp.ClientSession() as session:
        yield AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)


async def test_opening_the_pane_starts_a_thread_the_bot_titles_and_gives_prompts(
    stack: Stack,
) -> None:
    """The page's new thread reaches the real bot as a signed assistant_thread_started event,
    which answers with a manager's prompts and a title for the thread, kept for the pane."""
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            stack.page.make_url("/ui/assistant"), json={"as": "UMEERA", "context": FIESTA_OPS}
        ) as answer,
    ):
        assert answer.status == 200
        thread = (await answer.json())["thread"]
    await stack.settle()
    shown = stack.api.threads[(thread["channel"], thread["thread_ts"])]
    assert thread["channel"] == "DMEERA"
    assert shown["title"] == "Countersign for Meera Iyer"
    assert "What's waiting for me?" in [p["title"] for p in shown["prompts"]]


async def test_moving_to_a_channel_with_the_pane_open_tells_the_bot_of_the_new_context(
    stack: Stack,
) -> None:
    """The bot takes the signed assistant_thread_context_changed without reading the thread
    back; a thread that is not the person's own is refused."""
    url = stack.page.make_url("/ui/assistant")
    with capture_logs() as logs:
        async with aiohttp.ClientSession() as session:
            async with session.post(url, json={"as": "UMEERA"}) as answer:
                thread = (await answer.json())["thread"]
            moved = {"as": "UMEERA", "thread_ts": thread["thread_ts"], "context": FIESTA_OPS}
            async with session.post(url, json=moved) as answer:
                assert answer.status == 200
            async with session.post(url, json={**moved, "as": "UARJUN"}) as answer:
                assert answer.status == 400
        await stack.settle()
    assert [e for e in logs if e["event"] == "event_undelivered"] == []
    assert stack.api.called("conversations.replies") == []


async def test_the_pane_refuses_a_context_the_person_is_not_in(
    page: tuple[WebApi, TestServer],
) -> None:
    """Sam (Harbor Books) cannot start a thread saying he looks at Fiesta's channel."""
    api, server = page
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            server.make_url("/ui/assistant"), json={"as": "USAM", "context": FIESTA_OPS}
        ) as answer,
    ):
        assert answer.status == 400
    assert api.threads == {}


async def test_a_status_is_told_to_the_dms_person_alone_and_the_answer_takes_it_away(
    page: tuple[WebApi, TestServer], client: AsyncWebClient
) -> None:
    """Meera's feed shows her thread's status, then the app's answer and the status cleared;
    Arjun's feed carries none of it."""
    api, server = page
    thread = "1700000000.000001"
    async with (
        aiohttp.ClientSession() as session,
        session.get(server.make_url("/ui/feed"), params={"as": "UMEERA"}) as meera,
        session.get(server.make_url("/ui/feed"), params={"as": "UARJUN"}) as arjun,
    ):
        await opened(meera)
        await opened(arjun)
        where = {"channel_id": "DMEERA", "thread_ts": thread}
        await client.assistant_threads_setStatus(**where, status="is reading requests…")
        await client.chat_postMessage(channel="DMEERA", thread_ts=thread, text="Two requests")
        await client.chat_postMessage(channel=FIESTA_OPS, text="for everyone")
        seen = [await asyncio.wait_for(event(meera), _NEVER) for _ in range(3)]
        first_for_arjun = await asyncio.wait_for(event(arjun), _NEVER)
    assert [(kind, data.get("status")) for kind, data in seen] == [
        ("assistant", "is reading requests…"),
        ("message", None),
        ("assistant", ""),
    ]
    assert seen[1][1]["text"] == "Two requests"
    assert first_for_arjun[1]["text"] == "for everyone"
    assert api.threads[("DMEERA", thread)]["status"] == ""


async def test_a_feedback_press_must_name_one_of_its_two_buttons(
    page: tuple[WebApi, TestServer], client: AsyncWebClient
) -> None:
    """A thumb's value is one of the pair's (Slack sends no other); any other is refused."""
    _, server = page
    feedback = {
        "type": "feedback_buttons",
        "action_id": "feedback",
        "positive_button": {"text": {"type": "plain_text", "text": "Good"}, "value": "good"},
        "negative_button": {"text": {"type": "plain_text", "text": "Bad"}, "value": "bad"},
    }
    blocks = [{"type": "context_actions", "block_id": "feedback", "elements": [feedback]}]
    posted = await client.chat_postMessage(channel="DMEERA", text="Two requests", blocks=blocks)
    press = {"as": "UMEERA", "channel": "DMEERA", "ts": posted["ts"], "action_id": "feedback"}
    async with aiohttp.ClientSession() as session:
        url = server.make_url("/ui/press")
        for value in ("approve", None):
            async with session.post(
                url, json={**press, "block_id": "feedback", "value": value}
            ) as answer:
                assert answer.status == 400, value
                assert "no feedback button" in (await answer.json())["error"]


async def test_a_threads_title_and_prompts_outlive_a_restart_and_its_status_does_not(
    tmp_path: Path,
) -> None:
    """The saved workspace keeps what the pane shows of a thread, but not a status of a turn
    the stopped run was in."""
    path = tmp_path / "state.json"
    before = Workspace()
    store = WorkspaceStore(path)
    store.attach(before)
    before.set_assistant("DMEERA", "1.000001", title="Countersign for Meera Iyer")
    before.set_assistant("DMEERA", "1.000001", status="is thinking…")
    store.save()
    after = Workspace()
    WorkspaceStore(path).load(after)
    assert after.assistant[("DMEERA", "1.000001")] == {
        "channel": "DMEERA",
        "thread_ts": "1.000001",
        "title": "Countersign for Meera Iyer",
    }
