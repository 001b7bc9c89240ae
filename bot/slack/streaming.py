"""Streams an answer into a Slack thread (``chat.startStream`` / ``appendStream`` / ``stopStream``);
never a card, never holds up the model.

The core's ``Stream`` for Slack. ``append`` only buffers: the text goes out from one flusher
task, one call at a time, in batches (at most one call a second while words arrive, or as soon
as ``SIZE`` characters wait), so not every token is a call and a slow Slack call never slows
the model. The first words go out at once: the person sees the answer begin.

Slack's failures never lose text. A 429 keeps the batch waiting and holds the flusher off for
the ``Retry-After`` Slack gave; the batch goes with the next call. Any other failure (a plan
or a channel that cannot stream, a network error) ends the stream: ``close`` reports only the
text Slack took, and the core posts the rest as a message of its own. A stream that never
started (its first call failed or never came) costs nothing, and the answer is posted whole.

The model's words go in ``markdown_text`` with Slack's three escapes (``bot.slack.mrkdwn.esc``):
a ``<!channel>`` in an answer pings nobody. The feedback buttons go on ``stopStream``'s blocks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.blocks import Block
from bot.slack.mrkdwn import esc
from bot.slack.outbound import slack_error

__all__ = ["CALL_TIMEOUT", "EVERY", "SIZE", "SlackStream"]

log = structlog.get_logger("bot.slack.streaming")

EVERY = 1.0  # seconds between calls while words arrive
SIZE = 256  # characters that go out at once, whatever the time
_LAST_TRIES = 3  # stopStream tries when Slack answers 429
_LONGEST_WAIT = 3.0  # seconds a closing stream waits out a 429, at most, per try
_DEFAULT_RETRY = 1.0  # a 429 without Retry-After
# Seconds one call may take. One that takes longer ends the stream: whether Slack took its
# words is unknown, and the answer's cards wait behind it.
CALL_TIMEOUT = 10.0


class SlackStream:
    """One answer streamed into one thread, for one person (Slack's recipient)."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        thread_ts: str,
        recipient_user: str,
        recipient_team: str,
        blocks: Callable[[], list[Block]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client, self.channel, self.thread_ts = _unretried(client), channel, thread_ts
        self.recipient_user, self.recipient_team = recipient_user, recipient_team
        self.blocks, self.clock = blocks, clock
        self.ts: str | None = None  # the streamed message, once Slack has started it
        self.failed = False
        self._pending = ""  # appended, not yet taken by Slack
        self._shown = ""  # taken by Slack, in order
        self._last = float("-inf")  # when the last call went out
        self._held_until = float("-inf")  # a 429's Retry-After
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def append(self, text: str) -> None:
        if self.failed or self._closing.is_set():
            return
        self._pending += text
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush())

    @property
    def message(self) -> str | None:
        return self.ts

    async def close(self) -> str:
        self._closing.set()
        if self._task is not None:
            await self._task
        if self.ts is None:
            return ""  # nothing shown: the answer is posted whole
        if self.failed:
            await self._stop(text="")  # ends the message where it stopped, if Slack lets it
            return self._shown
        for _ in range(_LAST_TRIES):
            text = self._pending
            if await self._stop(text=text):
                self._pending, self._shown = self._pending[len(text) :], self._shown + text
                break
            if self._ended():
                break
            await asyncio.sleep(min(_LONGEST_WAIT, max(0.0, self._held_until - self.clock())))
        log.info("stream_closed", channel=self.channel, ts=self.ts, shown=len(self._shown))
        return self._shown

    def _ended(self) -> bool:
        """Whether Slack refused the stream for good (a call can end it at any await)."""
        return self.failed

    async def _flush(self) -> None:
        """Sends what waits, batch by batch, until nothing does or the stream closes."""
        while self._pending and not self.failed and not self._closing.is_set():
            wait = self._wait()
            if wait > 0:
                try:
                    async with asyncio.timeout(wait):
                        await self._closing.wait()
                except TimeoutError:
                    pass
                continue  # closing: what waits goes with stopStream
            text = self._pending
            if await self._send(text):
                self._pending, self._shown = self._pending[len(text) :], self._shown + text

    def _wait(self) -> float:
        """Seconds until the next call may go: none for the first words or a full batch."""
        now = self.clock()
        if now < self._held_until:
            return self._held_until - now
        if self.ts is None or len(self._pending) >= SIZE:
            return 0.0
        return max(0.0, self._last + EVERY - now)

    async def _send(self, text: str) -> bool:
        """Starts the message with ``text``, or adds ``text`` to it; False if Slack did not take it."""
        self._last = self.clock()
        return await self._guarded(self._append(text), "stream_append_failed")

    async def _append(self, text: str) -> None:
        if self.ts is None:
            response = await self.client.chat_startStream(
                channel=self.channel,
                thread_ts=self.thread_ts,
                markdown_text=esc(text),
                recipient_user_id=self.recipient_user,
                recipient_team_id=self.recipient_team,
            )
            self.ts = str(response["ts"])
        else:
            await self.client.chat_appendStream(
                channel=self.channel, ts=self.ts, markdown_text=esc(text)
            )

    async def _stop(self, *, text: str) -> bool:
        """Ends the message, with the last words and the feedback buttons (none if it failed)."""
        assert self.ts is not None
        stop = self.client.chat_stopStream(
            channel=self.channel,
            ts=self.ts,
            markdown_text=esc(text) if text else None,
            blocks=None if self.failed else self.blocks(),
        )
        return await self._guarded(stop, "stream_stop_failed")

    async def _guarded(self, call: Awaitable[object], event: str) -> bool:
        """Makes one call within ``CALL_TIMEOUT``; False (and why, logged) if Slack did not take it."""
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                await call
        except SlackApiError as failed:
            return self._refused(failed, event)
        except (TimeoutError, SlackClientError, aiohttp.ClientError) as failed:
            self.failed = True
            log.warning(event, channel=self.channel, error=type(failed).__name__)
            return False
        except (
            Exception
        ):  # an answer Slack never gives (no ts): the stream ends, the rest is posted
            self.failed = True
            log.exception(event, channel=self.channel)
            return False
        return True

    def _refused(self, failed: SlackApiError, event: str) -> bool:
        """A 429 holds the stream off for Slack's Retry-After; anything else ends it."""
        error = slack_error(failed)
        if error == "ratelimited" or failed.response.status_code == 429:
            retry = failed.response.headers.get("Retry-After") or failed.response.headers.get(
                "retry-after"
            )
            self._held_until = self.clock() + _seconds(retry)
        else:
            self.failed = True
        log.warning(event, channel=self.channel, error=error, ended=self.failed)
        return False


def _seconds(retry_after: object) -> float:
    try:
        return max(0.0, float(str(retry_after)))
    except ValueError:
        return _DEFAULT_RETRY


def _unretried(client: AsyncWebClient) -> AsyncWebClient:
    """The client's token and connections without its 429 retries: a stream waits out a 429
    itself, between calls, where a call sleeping out Retry-After would hold the answer's cards."""
    return AsyncWebClient(
        token=client.token,
        base_url=client.base_url,
        session=client.session,
        timeout=client.timeout,
        retry_handlers=[
            handler
            for handler in client.retry_handlers
            if not isinstance(handler, AsyncRateLimitErrorRetryHandler)
        ],
    )
