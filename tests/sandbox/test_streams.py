"""The sandbox's Web API streams a message as Slack documents: start, append, stop, in the feed."""

from __future__ import annotations

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.sandbox import BOT_TOKEN, FIESTA_OPS, WebApi
from bot.sandbox.workspace import Change

_FEEDBACK = [{"type": "context_actions", "elements": []}]


async def test_slack_sdks_chat_stream_grows_one_message_the_feed_sees_each_step(
    page: tuple[WebApi, TestServer],
) -> None:
    """slack_sdk's own helper (chunks, then stop with blocks) makes one message, live each step."""
    api, _ = page
    seen: list[Change] = []
    api.workspace.listeners.append(seen.append)
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)
        thread = (await client.chat_postMessage(channel="UARJUN", text="question"))["ts"]
        stream = await client.chat_stream(channel="DARJUN", thread_ts=thread, buffer_size=5)
        await stream.append(markdown_text="Three ")
        await stream.append(markdown_text="branches.")
        await stream.stop(blocks=_FEEDBACK)
    message = api.message("DARJUN", str(stream.ts))
    assert (message.text, message.thread_ts, message.blocks) == (
        "Three branches.",
        thread,
        _FEEDBACK,
    )
    assert message.streamed and not message.streaming and not message.edited
    grown = [c.data["text"] for c in seen if c.data.get("ts") == message.ts]
    assert grown == ["Three ", "Three branches.", "Three branches."]


async def test_a_channel_stream_names_its_recipient_and_a_stopped_one_takes_no_more(
    page: tuple[WebApi, TestServer],
) -> None:
    """In a channel startStream wants recipient_user_id and _team_id; after stop, appends fail."""
    api, _ = page
    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=BOT_TOKEN, base_url=api.base_url, session=session)
        thread = (await client.chat_postMessage(channel=FIESTA_OPS, text="q"))["ts"]
        with pytest.raises(SlackApiError, match="invalid_arguments"):
            await client.chat_startStream(channel=FIESTA_OPS, thread_ts=thread, markdown_text="x")
        started = await client.chat_startStream(
            channel=FIESTA_OPS,
            thread_ts=thread,
            markdown_text="x",
            recipient_user_id="UARJUN",
            recipient_team_id=api.team_id,
        )
        await client.chat_stopStream(channel=FIESTA_OPS, ts=started["ts"])
        with pytest.raises(SlackApiError, match="message_not_in_streaming_state"):
            await client.chat_appendStream(channel=FIESTA_OPS, ts=started["ts"], markdown_text="y")
        with pytest.raises(SlackApiError, match="message_not_found"):
            await client.chat_appendStream(channel=FIESTA_OPS, ts="1.000000", markdown_text="y")
    assert api.message(FIESTA_OPS, started["ts"]).text == "x"
