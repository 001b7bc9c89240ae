"""Drives the fake Slack as Slack and its people would: mentions, presses, forms; never checks.

Each lane plays one round after another, each round a small story on a request of its own:

- ``solo``: Arjun asks to approve a request and approves it (half of them double-tapped);
- ``reject``: Arjun asks, then presses Reject and gives a reason in the form;
- ``routed``: Ravi (staff) asks; Arjun and Meera, each sent a copy, press Approve at once;
- ``two``: Ravi asks for a request of ₹42,000, which needs both managers; both approve;
- ``batch``: Arjun asks to approve two requests in one message (one card) and approves it;
- ``edit``: Arjun asks, presses Edit, changes the note, and approves the new card.

Slack's own behaviour is kept: an event not acknowledged within 3 s is sent again with
``X-Slack-Retry-Num`` (up to three times), and a press that got no acknowledgement is pressed
again by its person. Everything sent and every answer's status is tallied for the checks.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.soak.servers import CUT
from bench.soak.slack import SoakSlack, actions_of, card_of
from bench.stage import SIGNING_SECRET
from bot.sandbox.workspace import Message
from bot.slack.blocks import APPROVE_VIEW
from bot.slack.texts import messages
from tests.support.slack_requests import block_action, event, form, message, signed, view_submission

__all__ = ["CHANNEL", "ROUNDS", "SEEN_S", "Load", "Mention", "Tally"]

Json = dict[str, Any]
CHANNEL = "C0SOAK"
_ACK_S = 3.0  # Slack's window for an acknowledgement
# What the bot says when it could not finish a message or a press and it should be sent again
# (the server running it killed, the database down): an answer, not silence.
_TRY_AGAIN = frozenset(
    {
        messages.message_lost(),
        messages.message_database_unreachable(),
        messages.database_unreachable(),
    }
)
SEEN_S = 30.0  # how long a person waits to see a card before giving up on it: past it, a failure
_RETRIES = 3


@dataclass(frozen=True, slots=True)
class Mention:
    """One message to the bot: who, where (its ts is the thread the answer goes to), what."""

    user: str
    channel: str
    ts: str
    text: str


@dataclass
class Tally:
    """What the load sent and how each request was answered."""

    presses: int = 0
    mentions: list[Mention] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    server_5xx: list[str] = field(default_factory=list)
    cut: int = 0  # requests a killed server held when it died (the proxy's 502)
    retry_after: int = 0  # 503s with Retry-After: the database down, as /healthz says it
    unacknowledged: list[str] = field(default_factory=list)  # presses never acknowledged
    rounds: Counter[str] = field(default_factory=Counter)
    unseen: list[str] = field(default_factory=list)  # cards a person waited for in vain
    # Mentions (and presses) answered with words to send it again and no card within the wait
    # (the turn cut off by a kill and said to be lost, the database down): not silence.
    worded: list[str] = field(default_factory=list)
    # Seconds from a mention to its card, and from an acknowledged Approve to its card's update.
    to_card: list[float] = field(default_factory=list)
    to_update: list[float] = field(default_factory=list)


class Load:
    """Sends signed Slack requests through the proxy and waits for what Slack shows."""

    def __init__(
        self, url: str, slack: SoakSlack, http: aiohttp.ClientSession, requests: Iterator[int]
    ) -> None:
        self.url, self.slack, self.http, self.requests = url, slack, http, requests
        self.tally = Tally()
        self._ts = itertools.count(1)

    async def _post(self, body: str, content_type: str, headers: dict[str, str]) -> int:
        sent = {**signed(body, SIGNING_SECRET, content_type=content_type), **headers}
        try:
            async with self.http.post(
                self.url, data=body.encode(), headers=sent, timeout=aiohttp.ClientTimeout(_ACK_S)
            ) as answer:
                await answer.read()
                status, cut = answer.status, CUT in answer.headers
                later = status == 503 and "Retry-After" in answer.headers
        except (aiohttp.ClientError, TimeoutError):
            return 0  # no acknowledgement within Slack's window
        self.tally.statuses[status] += 1
        if cut:
            self.tally.cut += 1
        elif later:
            self.tally.retry_after += 1  # the database down, and said so: sent again
        elif status >= 500:
            self.tally.server_5xx.append(f"{status} for {body[:80]}")
        return status

    async def event(self, inner: Json) -> None:
        """Delivers an event, and again as Slack does while it is not acknowledged."""
        body = json.dumps(event(inner))
        for retry in range(_RETRIES + 1):
            headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
            if await self._post(body, "application/json", headers if retry else {}) == 200:
                return

    async def mention(self, user: str, text: str) -> Mention:
        said = Mention(user, CHANNEL, f"1700000000.{next(self._ts):06d}", text)
        self.tally.mentions.append(said)
        await self.event(
            message(user, f"<@UBOT> {text}", channel=CHANNEL, ts=said.ts, kind="app_mention")
        )
        return said

    async def press(self, user: str, card: Message, action: str = "card_approve") -> str | None:
        """Presses a button as it is shown now; the trigger id, or None if it was not there.

        An acknowledged Approve is timed to its card's update (what the person sees change).
        """
        sent, before, cid = time.monotonic(), card.blocks, card_of(card)
        told = len(self.slack.indexed.ephemeral[user])
        trigger = await self._press(user, card, action)
        if trigger is None or action != "card_approve":
            return trigger
        # A channel's card asks its confirm in a modal for whom it is issued to: "Yes, approve".
        asked = self.slack.opened.get(trigger)
        if asked is not None and asked.get("callback_id") == APPROVE_VIEW:
            del self.slack.opened[trigger]
            await self.submit(user, asked, values={})
        deadline = sent + SEEN_S
        while card.blocks is before and time.monotonic() < deadline:
            await self.slack.wait(0.5)
        if card.blocks is not before:
            self.tally.to_update.append(time.monotonic() - sent)
            return trigger
        said = [m.text for m in self.slack.indexed.ephemeral[user][told:]]
        what = f"the update of {cid} in {card.channel} after {user}'s press"
        if any(text in _TRY_AGAIN for text in said):
            self.tally.worded.append(f"{what}: {said[-1][:80]}")  # told to press again
        else:
            self.tally.unseen.append(what)
        return trigger

    async def _press(self, user: str, card: Message, action: str) -> str | None:
        block = next((b for b in card.blocks if b.get("type") == "actions"), None)
        button = next((e for e in actions_of(card) if e["action_id"] == action), None)
        if block is None or button is None:
            return None  # decided meanwhile: nothing left to press
        for _ in range(_RETRIES):
            trigger = f"trigger.{next(self._ts)}"
            payload = block_action(
                user,
                action_id=action,
                value=button["value"],
                block_id=block["block_id"],
                channel=card.channel,
                message_ts=card.ts,
                thread_ts=card.thread_ts,
                trigger_id=trigger,
            )
            self.slack.triggers[trigger] = user
            self.tally.presses += 1
            if await self._post(form(payload), "application/x-www-form-urlencoded", {}) == 200:
                return trigger
            await asyncio.sleep(1.0)  # "This app did not respond": the person presses again
        self.tally.unacknowledged.append(f"{action} by {user} on {card_of(card)}")
        return None

    async def submit(self, user: str, view: Json, **typed: Any) -> None:
        body = form(view_submission(user, view, **typed))
        await self._post(body, "application/x-www-form-urlencoded", {})

    async def _until(self, found: Callable[[], Any], what: str) -> Any:
        deadline = time.monotonic() + SEEN_S
        while (got := found()) is None and time.monotonic() < deadline:
            await self.slack.wait(0.5)
        if got is None:
            self.tally.unseen.append(what)
        return got

    async def card(self, said: Mention, *, besides: str | None = None) -> Message | None:
        """The live card posted in answer to a mention (another than ``besides``), timed from
        the mention; None when none came in time (answered in words only: tallied apart)."""
        sent = time.monotonic()

        def found() -> Message | None:
            thread = self.slack.indexed.thread(said.channel, said.ts)
            return next((m for m in thread if actions_of(m) and card_of(m) != besides), None)

        deadline = sent + SEEN_S
        while (got := found()) is None and time.monotonic() < deadline:
            await self.slack.wait(0.5)
        if got is not None:
            self.tally.to_card.append(time.monotonic() - sent)
            return got
        words = [m.text for m in self.slack.indexed.thread(said.channel, said.ts)]
        words = [text for text in words if text in _TRY_AGAIN]
        what = f"{said.text!r} ({said.ts})"
        if words and besides is None:
            # The person was told something (the turn cut off by a kill and said lost, the
            # database down): no card, but not silence.
            self.tally.worded.append(f"{what}: {words[-1][:80]}")
        else:
            self.tally.unseen.append(f"a card for {what}")
        return None

    async def copy(self, user: str, card_id: str) -> Message | None:
        """The private copy of a card in the person's DM with the app."""
        dm = f"D{user[1:]}"

        def found() -> Message | None:
            return next((m for m in self.slack.indexed.by_card[card_id] if m.channel == dm), None)

        return await self._until(found, f"{user}'s copy of {card_id}")  # type: ignore[no-any-return]

    async def modal(self, trigger: str) -> Json | None:
        return await self._until(  # type: ignore[no-any-return]
            lambda: self.slack.opened.pop(trigger, None), f"the form of {trigger}"
        )

    # -- the rounds ---------------------------------------------------------------------------

    async def solo(self) -> None:
        card = await self.card(
            await self.mention("UARJUN", f"approve request {next(self.requests)}")
        )
        if card is None:
            return
        if random.random() < 1 / 2:  # a double tap
            await asyncio.gather(self.press("UARJUN", card), self.press("UARJUN", card))
        else:
            await self.press("UARJUN", card)

    async def reject(self) -> None:
        card = await self.card(
            await self.mention("UARJUN", f"approve request {next(self.requests)}")
        )
        trigger = await self.press("UARJUN", card, "card_reject") if card else None
        view = await self.modal(trigger) if trigger else None
        if view is not None:
            await self.submit("UARJUN", view, reason="Not in this quarter's budget")

    async def routed(self) -> None:
        await self._both(next(self.requests), together=True)

    async def two(self) -> None:
        await self._both(next(BIG), together=random.random() < 0.5)

    async def _both(self, request: int, *, together: bool) -> None:
        card = await self.card(await self.mention("URAVI", f"approve request {request}"))
        cid = card_of(card) if card else None
        if cid is None:
            return
        arjun, meera = await self.copy("UARJUN", cid), await self.copy("UMEERA", cid)
        if arjun is None or meera is None:
            return
        if together:
            await asyncio.gather(self.press("UARJUN", arjun), self.press("UMEERA", meera))
        else:
            await self.press("UARJUN", arjun)
            await self.press("UMEERA", self.slack.indexed.message(meera.channel, meera.ts))

    async def batch(self) -> None:
        first, second = next(self.requests), next(self.requests)
        card = await self.card(
            await self.mention("UARJUN", f"approve requests {first} and {second}")
        )
        if card is not None:
            await self.press("UARJUN", card)

    async def edit(self) -> None:
        said = await self.mention("UARJUN", f"approve request {next(self.requests)}")
        card = await self.card(said)
        trigger = await self.press("UARJUN", card, "card_edit") if card else None
        view = await self.modal(trigger) if trigger else None
        if card is None or view is None:
            return
        typed = {"edit_note": {"value": {"type": "plain_text_input", "value": "checked twice"}}}
        await self.submit("UARJUN", view, values=typed)
        edited = await self.card(said, besides=card_of(card))
        if edited is not None:
            await self.press("UARJUN", edited)


# How often each round is played: the presses of a run come mostly from solo and routed cards.
ROUNDS: dict[str, float] = {
    "solo": 0.35,
    "reject": 0.1,
    "routed": 0.2,
    "two": 0.1,
    "batch": 0.15,
    "edit": 0.1,
}
# Requests of ₹42,000 (two approvers), numbered apart from the rest.
BIG_FROM = 100_000
BIG: Iterator[int] = itertools.count(BIG_FROM)


def play(load: Load, name: str) -> Coroutine[Any, Any, None]:
    round_: Callable[[], Coroutine[Any, Any, None]] = getattr(load, name)
    load.tally.rounds[name] += 1
    return round_()
