"""Turns what a person does in the sandbox into Slack's deliveries to the bot; never decides anything.

Writing a message records it in the workspace first (everyone in the channel sees it at once)
and then tells the bot as Slack would: a DM as ``message.im``; a channel message as
``message.channels``, and, when it mentions the app, as ``app_mention`` too — two deliveries
of one message, which the bot must answer once. A button press (a feedback thumb too), a
modal submission, a slash command, opening the App Home and opening the assistant pane on a
new thread become the payloads Slack sends for them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine
from typing import Any

import structlog

from bot.sandbox import payloads
from bot.sandbox.delivery import Answer, Delivery
from bot.sandbox.webapi import WebApi
from bot.sandbox.workspace import BOT_ID, BOT_USER, Message, Workspace

__all__ = ["Acting", "ActingError"]

log = structlog.get_logger("bot.sandbox.acting")

Json = dict[str, Any]
_MENTION = re.compile(r"(?<![\w<])@countersign\b", re.IGNORECASE)


class ActingError(ValueError):
    """The page asked for something this person cannot do (no such message, button or modal)."""


class Acting:
    """A person's hands in the sandbox: say, press, submit, open the Home tab, run a command."""

    def __init__(self, api: WebApi, delivery: Delivery) -> None:
        self.api, self.delivery = api, delivery
        self.workspace: Workspace = api.workspace
        self._tasks: set[asyncio.Task[Any]] = set()

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        # Kept referenced: an unreferenced task can be collected before it delivers.
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Waits for deliveries in flight (tests, and a clean shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _person(self, user: str) -> str:
        person = self.workspace.users.get(user)
        if person is None or person.is_bot:
            raise ActingError(f"no such person: {user}")
        return person.team

    def _channel(self, user: str, channel_id: str) -> str:
        channel = self.workspace.channels.get(channel_id)
        if channel is None or user not in channel.members:
            raise ActingError(f"{user} is not in {channel_id}")
        return channel.kind

    def say(
        self, user: str, channel: str, text: str, thread_ts: str | None = None
    ) -> Message | None:
        """Posts a message as ``user`` and delivers it; ``/countersign …`` runs the command instead."""
        team, kind = self._person(user), self._channel(user, channel)
        text = text.strip()
        if not text:
            raise ActingError("an empty message")
        if text.startswith("/countersign"):
            self._spawn(self.command(user, channel, text.removeprefix("/countersign").strip()))
            return None
        text = _MENTION.sub(f"<@{BOT_USER}>", text)
        message = self.workspace.post(
            Message(
                channel=channel,
                ts=self.workspace.next_ts(),
                text=text,
                thread_ts=thread_ts,
                user=user,
            )
        )
        sends = [
            payloads.message(
                user,
                text,
                channel=channel,
                ts=message.ts,
                thread_ts=thread_ts,
                team=team,
                channel_type=kind,
            )
        ]
        if kind == "channel" and f"<@{BOT_USER}>" in text:
            sends.append(
                payloads.message(
                    user,
                    text,
                    channel=channel,
                    ts=message.ts,
                    thread_ts=thread_ts,
                    team=team,
                    kind="app_mention",
                )
            )
        for inner in sends:
            self._spawn(self.delivery.event(payloads.event(inner, team=team)))
        return message

    async def press(
        self,
        user: str,
        *,
        action_id: str,
        block_id: str,
        channel: str | None = None,
        ts: str | None = None,
        value: str | None = None,
    ) -> Answer:
        """Presses a button on a message (``channel``/``ts``) or, without them, in the App Home;
        ``value`` says which of a pair of feedback buttons (thumbs up or down) was pressed."""
        team = self._person(user)
        view = None if channel else self.workspace.homes.get(user)
        found: Message | None = None
        if channel and ts:
            found = self._pressed(user, channel, ts)
            blocks = found.blocks
        elif view is not None:
            blocks = list(view.get("blocks") or [])
        else:
            raise ActingError("nothing to press")
        button = _button(blocks, action_id, block_id)
        kind, pressed = _pressed_value(button, value)
        trigger = payloads.new_id("trigger.")
        self.api.triggers[trigger] = user
        # A press on an ephemeral message (a `/countersign pending` list) can have its answer
        # replace that message, as in Slack.
        ephemeral = found is not None and found.ephemeral_to is not None
        extra: dict[str, Any] = {}
        if ephemeral and channel and ts:
            url = self.api.response_url(to=(user, channel), replaces=(channel, ts))
            extra = {"ephemeral": True, "response_url": url}
        payload = payloads.block_action(
            user,
            action_id=action_id,
            value=pressed,
            block_id=block_id,
            channel=channel,
            message_ts=ts,
            thread_ts=found.thread_ts if found else None,
            channel_name=self._name_in_payloads(channel),
            message=self._as_apps_see(found) if found else None,
            user_team=team,
            team=team,
            view=view,
            trigger_id=trigger,
            action_type=kind,
            **extra,
        )
        return await self.delivery.interaction(payload)

    def _pressed(self, user: str, channel: str, ts: str) -> Message:
        self._channel(user, channel)
        try:
            return self.workspace.message(channel, ts)
        except StopIteration:
            raise ActingError(f"no message {channel}/{ts}") from None

    def _name_in_payloads(self, channel: str | None) -> str:
        """Slack names a DM with the app "directmessage" in a press's payload."""
        known = self.workspace.channels.get(channel or "")
        if known is None:
            return ""
        return "directmessage" if known.kind == "im" else known.name

    def _as_apps_see(self, message: Message) -> Json:
        """The pressed message as a press's payload carries it: its sender, text and blocks."""
        shown: Json = {"user": message.user, "text": message.text, "blocks": message.blocks}
        if message.user == BOT_USER:
            team = self.workspace.channels[message.channel].team
            shown |= {"bot_id": BOT_ID, "app_id": payloads.APP_ID, "team": team}
        return shown

    async def submit(self, user: str, values: Json) -> Answer:
        """Submits ``user``'s open modal with ``values`` in Slack's ``state.values`` shape."""
        team = self._person(user)
        modal = self.workspace.modals.get(user)
        if modal is None:
            raise ActingError("no modal is open")
        outcome = await self.delivery.interaction(
            payloads.view_submission(user, modal, values=values, team=team)
        )
        answer = outcome.json() or {}
        action = answer.get("response_action")
        if outcome.ok and action == "update" and isinstance(answer.get("view"), dict):
            self.workspace.open_modal(user, answer["view"])
        elif outcome.ok and action != "errors":
            self.workspace.close_modal(user)
        return outcome

    def start_thread(self, user: str, context: str | None = None) -> Json:
        """Opening the app's assistant pane: a new thread in the person's DM with the app, which
        Slack announces to the app with the channel being looked at (``context``)."""
        team = self._person(user)
        if context:
            self._channel(user, context)
        dm = self.workspace.open_dm(user)
        thread = self.workspace.set_assistant(dm.id, self.workspace.next_ts())
        inner = payloads.thread_started(
            user, channel=dm.id, thread_ts=thread["thread_ts"], context=context, team=team
        )
        self._spawn(self.delivery.event(payloads.event(inner, team=team)))
        return dict(thread)

    def change_context(self, user: str, thread_ts: str, context: str) -> Json:
        """The person moved to ``context`` with the pane open on their thread ``thread_ts``:
        Slack tells the app (``assistant_thread_context_changed``)."""
        team = self._person(user)
        self._channel(user, context)
        dm = self.workspace.open_dm(user)
        thread = self.workspace.assistant.get((dm.id, thread_ts))
        if thread is None:
            raise ActingError(f"no assistant thread {thread_ts} in {user}'s DM")
        inner = payloads.thread_started(
            user,
            channel=dm.id,
            thread_ts=thread_ts,
            context=context,
            team=team,
            kind="assistant_thread_context_changed",
        )
        self._spawn(self.delivery.event(payloads.event(inner, team=team)))
        return dict(thread)

    def close(self, user: str) -> None:
        self._person(user)
        self.workspace.close_modal(user)

    def open_home(self, user: str) -> None:
        """Opening the App Home tab: Slack tells the app, which publishes the person's view."""
        team = self._person(user)
        dm = self.workspace.dm_of(user)
        inner = payloads.home_opened(
            user, channel=dm.id if dm else "", view=self.workspace.homes.get(user)
        )
        self._spawn(self.delivery.event(payloads.event(inner, team=team)))

    async def command(self, user: str, channel: str, text: str) -> Answer:
        """``/countersign <text>``; the bot's answer arrives at the response_url, privately."""
        team = self._person(user)
        url = self.api.response_url(to=(user, channel))
        fields = payloads.command(user, text, channel=channel, team=team, response_url=url)
        return await self.delivery.command(fields)


def _pressed_value(element: Json, value: str | None) -> tuple[str, str]:
    """The pressed element's type and the value Slack sends: a button's own, or that of the
    feedback button pressed (one of its two; any other is no press Slack could send)."""
    kind = str(element.get("type") or "button")
    if kind != "feedback_buttons":
        return kind, str(element.get("value", ""))
    offered = {
        str((element.get(side) or {}).get("value", ""))
        for side in ("positive_button", "negative_button")
    }
    if value is None or value not in offered:
        raise ActingError(f"no feedback button with the value {value!r}")
    return kind, value


def _button(blocks: list[Json], action_id: str, block_id: str) -> Json:
    for block in blocks:
        if block.get("block_id") != block_id:
            continue
        elements = block.get("elements") or [block.get("accessory") or {}]
        for element in elements:
            if element.get("action_id") == action_id:
                return dict(element)
    raise ActingError(f"no button {action_id} in block {block_id}")
