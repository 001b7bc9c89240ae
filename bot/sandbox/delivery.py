"""Delivers what a person does to the bot's real ``/slack/events`` endpoint, signed, as Slack does; never answers for the bot.

Events are retried the way Slack retries them: when the bot does not answer 2xx within the
timeout (3 s at Slack), up to three more times with ``X-Slack-Retry-Num`` and
``X-Slack-Retry-Reason``, each attempt signed afresh. Slack waits a minute and then five
between retries; the sandbox keeps the order and the headers but shortens the waits.
Interactivity and slash commands are not retried (Slack shows the person an error instead).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
import structlog

from bot.sandbox.payloads import form, signed

__all__ = ["Answer", "Attempt", "Delivery"]

log = structlog.get_logger("bot.sandbox.delivery")

Json = dict[str, Any]
_JSON, _FORM = "application/json", "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class Attempt:
    """One HTTP attempt: its retry number, the reason Slack would give, and what came back."""

    retry: int
    reason: str | None
    status: int | None


@dataclass
class Answer:
    """What the bot answered a delivery: the last status and body, and every attempt made."""

    status: int | None
    body: str = ""
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json(self) -> Json | None:
        try:
            answer = json.loads(self.body) if self.body else None
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None


class Delivery:
    """Posts signed requests to the bot; ``url`` is its ``/slack/events``."""

    def __init__(
        self,
        url: str,
        secret: str,
        *,
        timeout: float = 3.0,
        retry_delays: Sequence[float] = (0.0, 1.0, 5.0),
    ) -> None:
        self.url, self.secret, self.timeout = url, secret, timeout
        self.retry_delays = tuple(retry_delays)
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        return self._session

    async def event(self, envelope: Json) -> Answer:
        """Delivers one Events API envelope, retrying as Slack does until the bot acks it."""
        body = json.dumps(envelope)
        outcome = Answer(None)
        reason: str | None = None
        for retry in range(len(self.retry_delays) + 1):
            if retry:
                await asyncio.sleep(self.retry_delays[retry - 1])
            extra = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": reason or ""}
            status, text, reason = await self._post(body, _JSON, extra if retry else {})
            outcome.status, outcome.body = status, text
            outcome.attempts.append(Attempt(retry, extra["X-Slack-Retry-Reason"] or None, status))
            if outcome.ok:
                break
        if not outcome.ok:
            log.warning(
                "event_undelivered", event_id=envelope.get("event_id"), status=outcome.status
            )
        return outcome

    async def interaction(self, payload: Json) -> Answer:
        """A button press or modal submission: one attempt, its answer returned."""
        status, text, _ = await self._post(form(payload), _FORM, {})
        return Answer(status, text, [Attempt(0, None, status)])

    async def command(self, fields: dict[str, str]) -> Answer:
        """A slash command: one attempt; the bot answers later through the response_url."""
        status, text, _ = await self._post(urlencode(fields), _FORM, {})
        return Answer(status, text, [Attempt(0, None, status)])

    async def _post(
        self, body: str, content_type: str, extra: dict[str, str]
    ) -> tuple[int | None, str, str | None]:
        """Status, body and — on failure — the retry reason Slack would send next time."""
        headers = {**signed(body, self.secret, content_type=content_type), **extra}
        limit = aiohttp.ClientTimeout(total=self.timeout)
        try:
            async with self._http().post(
                self.url, data=body.encode(), headers=headers, timeout=limit
            ) as response:
                text = await response.text()
        except TimeoutError:
            return None, "", "http_timeout"
        except aiohttp.ClientError as failed:
            log.warning("bot_unreachable", url=self.url, error=type(failed).__name__)
            return None, "", "http_error"
        return response.status, text, None if response.status < 300 else "http_error"
