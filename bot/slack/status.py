"""Shows an assistant thread's status (``assistant.threads.setStatus``); never holds up an answer.

A status is a courtesy: the answer must never wait for it. Each thread's statuses go out one at
a time, from the task set's ``typing`` lane, the latest wanted one only (a status overtaken
before it was sent is never sent), each with a short timeout. Slack's errors are logged and
dropped: a 429 must not slow the answer down, and the client's retry handler, which sleeps out a
429's ``Retry-After``, is cut short by the timeout. Any other error means the thread cannot show
a status (a workspace without the assistant feature): ``unsupported`` turns it off, and the
surface shows the hourglass reaction instead, as before.
"""

from __future__ import annotations

import asyncio

import aiohttp
import structlog
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.services import Background
from bot.slack.outbound import slack_error

__all__ = ["STATUS_TIMEOUT", "StatusLine"]

log = structlog.get_logger("bot.slack.status")

# Seconds one status call may take; a status later than that is about a step long gone.
STATUS_TIMEOUT = 2.0
_CLEAR = ""


class StatusLine:
    """One assistant thread's status for one turn: shown step by step, cleared at its end."""

    def __init__(
        self, client: AsyncWebClient, tasks: Background, *, channel: str, thread_ts: str
    ) -> None:
        self.client, self.tasks = client, tasks
        self.channel, self.thread_ts = channel, thread_ts
        self.unsupported = False
        self.closed = False
        self._wanted: str | None = None
        self._sent: str | None = None
        self._task: asyncio.Task[None] | None = None

    def show(self, text: str) -> None:
        """Asks for ``text`` to be the status; returns at once."""
        if self.closed or self.unsupported:
            return
        self._wanted = text
        self._kick()

    def close(self) -> None:
        """The turn is over: a status shown is cleared, and none is shown from now on."""
        if self.closed:
            return
        self.closed = True
        if self._sent is not None:
            self._wanted = _CLEAR
            self._kick()

    def _kick(self) -> None:
        if self._task is None or self._task.done():
            self._task = self.tasks.spawn(self._run(), name="assistant status", lane="typing")

    async def _run(self) -> None:
        while self._wanted is not None and self._wanted != self._sent and not self.unsupported:
            text = self._wanted
            self._sent = text
            await self._send(text)

    async def _send(self, text: str) -> None:
        try:
            async with asyncio.timeout(STATUS_TIMEOUT):
                await self.client.assistant_threads_setStatus(
                    channel_id=self.channel, thread_ts=self.thread_ts, status=text
                )
        except SlackApiError as failed:
            error = slack_error(failed)
            if error != "ratelimited" and failed.response.status_code != 429:
                self.unsupported = True
            log.warning("status_failed", channel=self.channel, error=error)
        except (TimeoutError, SlackClientError, aiohttp.ClientError) as failed:
            log.warning("status_failed", channel=self.channel, error=type(failed).__name__)
