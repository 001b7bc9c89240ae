"""Holds the sandbox's Slack in memory: teams, people, channels, messages, modals, App Homes, assistant threads; never talks HTTP.

Everything a person or the bot does ends up here, and every change is announced to the
listeners (the browser feed) as a small JSON-ready dict. Visibility rules live here too, so
the page and the tests agree on them: an ephemeral message belongs to one person, and a
person sees only the channels of their own workspace they are a member of.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "BOT_USER",
    "Change",
    "Channel",
    "Message",
    "SlackUser",
    "Team",
    "Workspace",
]

Json = dict[str, Any]
BOT_USER = "UBOT"
BOT_ID = "BBOT"
ChannelKind = Literal["channel", "im"]


@dataclass(frozen=True)
class Team:
    """A workspace; ``enterprise`` is the Enterprise Grid org it belongs to, if any."""

    id: str
    name: str
    domain: str
    enterprise: str | None = None


@dataclass
class SlackUser:
    """A Slack account; ``title`` is what the profile shows (the person's role in the demo)."""

    id: str
    name: str
    email: str | None = None
    is_bot: bool = False
    team: str = ""
    title: str = ""
    # What users.info says of the email: True (Slack confirmed it), False, or None (the field
    # is absent, as for some Slack Connect users; the bot must read that as unconfirmed).
    email_confirmed: bool | None = True
    # In an Enterprise Grid, the org's other workspaces the account is also a member of.
    org_teams: tuple[str, ...] = ()

    def shown(self) -> Json:
        return {
            "id": self.id,
            "name": self.name,
            "is_bot": self.is_bot,
            "team": self.team,
            "title": self.title,
        }


@dataclass
class Channel:
    id: str
    name: str
    team: str
    kind: ChannelKind = "channel"
    members: set[str] = field(default_factory=set)

    def shown(self) -> Json:
        return {"id": self.id, "name": self.name, "team": self.team, "kind": self.kind}


@dataclass
class Message:
    """A message as the workspace holds it; ``ephemeral_to`` is set for ephemeral ones."""

    channel: str
    ts: str
    text: str
    blocks: list[Json] = field(default_factory=list)
    thread_ts: str | None = None
    user: str | None = None
    reply_broadcast: bool = False
    ephemeral_to: str | None = None
    reactions: set[str] = field(default_factory=set)
    edited: bool = False
    # Made by chat.startStream (its text is markdown, shown above its blocks, as Slack does),
    # and ``streaming`` until chat.stopStream ends it.
    streamed: bool = False
    streaming: bool = False

    def shown(self) -> Json:
        return {
            "channel": self.channel,
            "ts": self.ts,
            "text": self.text,
            "blocks": self.blocks,
            "thread_ts": self.thread_ts,
            "user": self.user,
            "reply_broadcast": self.reply_broadcast,
            "ephemeral": self.ephemeral_to is not None,
            "reactions": sorted(self.reactions),
            "edited": self.edited,
            "streamed": self.streamed,
            "streaming": self.streaming,
        }


@dataclass(frozen=True)
class Change:
    """One thing that changed, and who may see it (None: whoever sees the channel)."""

    kind: str
    data: Json
    channel: str | None = None
    only: str | None = None


Listener = Callable[[Change], None]


class Workspace:
    """The people, channels and messages of one or more teams, with the bot installed in them."""

    def __init__(self, *, team_id: str = "T0FIESTA", team_name: str = "Fiesta Foods") -> None:
        self.teams: dict[str, Team] = {}
        self.users: dict[str, SlackUser] = {}
        self.channels: dict[str, Channel] = {}
        self.messages: list[Message] = []
        self.modals: dict[str, Json] = {}
        self.homes: dict[str, Json] = {}
        # (channel, thread_ts) → an assistant thread as its pane shows it: status, prompts, title
        self.assistant: dict[tuple[str, str], Json] = {}
        self.listeners: list[Listener] = []
        self.home_team = team_id
        self._ts = itertools.count(1)
        self._views = itertools.count(1)
        self.add_team(team_id, team_name)
        self.add_user(BOT_USER, "countersign", is_bot=True, team=team_id)

    # -- building ----------------------------------------------------------------------------

    def add_team(self, team_id: str, name: str, *, enterprise: str | None = None) -> Team:
        """Adds a workspace (again, to put it in an Enterprise Grid org)."""
        self.teams[team_id] = Team(team_id, name, name.lower().replace(" ", "-"), enterprise)
        return self.teams[team_id]

    def add_user(
        self,
        user_id: str,
        name: str,
        email: str | None = None,
        *,
        is_bot: bool = False,
        team: str | None = None,
        title: str = "",
        email_confirmed: bool | None = True,
    ) -> SlackUser:
        user = SlackUser(
            user_id, name, email, is_bot, team or self.home_team, title, email_confirmed
        )
        self.users[user_id] = user
        if not is_bot:
            self.open_dm(user_id)
        return user

    def add_channel(
        self, channel_id: str, name: str, *, kind: ChannelKind = "channel", team: str | None = None
    ) -> Channel:
        channel = Channel(channel_id, name, team or self.home_team, kind, {BOT_USER})
        self.channels[channel_id] = channel
        return channel

    def join(self, channel_id: str, *users: str) -> None:
        self.channels[channel_id].members.update(users)

    # -- reading ------------------------------------------------------------------------------

    def next_ts(self) -> str:
        """A message timestamp: the wall clock's seconds and a counter that never repeats."""
        return f"{int(time.time())}.{next(self._ts):06d}"

    def next_view_id(self) -> str:
        return f"V{next(self._views):08d}"

    def continue_counters(self, *, ts: int, views: int) -> None:
        """Numbers new messages and views from ``ts`` and ``views`` on (a restored workspace)."""
        self._ts = itertools.count(ts)
        self._views = itertools.count(views)

    def dm_of(self, user_id: str) -> Channel | None:
        return self.channels.get(f"D{user_id[1:]}")

    def open_dm(self, user_id: str, *, team: str | None = None) -> Channel:
        """The app's DM with ``user_id`` in ``team`` (their own workspace unless given), opened once.

        One DM per (workspace, person): opening it again gives the same channel, so a card's
        copy and its later updates land in one conversation. In the person's own workspace it
        is the DM their account came with; in another (a Slack Connect installation) it is
        made on first use.
        """
        user = self.users[user_id]
        where = team or user.team
        channel_id = f"D{user_id[1:]}" if where == user.team else f"D{where[1:]}{user_id[1:]}"
        dm = self.channels.get(channel_id)
        if dm is None:
            dm = self.add_channel(channel_id, user.name, kind="im", team=where)
            dm.members.add(user_id)
            self._tell(Change("channel", dm.shown(), only=user_id))
        return dm

    def channel_for(self, channel_or_user: str) -> str:
        """Posting to a user id posts in their DM with the app, as Slack does."""
        if channel_or_user.startswith(("U", "W")):
            dm = self.dm_of(channel_or_user)
            return dm.id if dm else channel_or_user
        return channel_or_user

    def message(self, channel: str, ts: str) -> Message:
        """The message at ``channel``/``ts``; StopIteration when there is none."""
        return next(m for m in self.messages if m.channel == channel and m.ts == ts)

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        return [m for m in self.messages if m.channel == channel and m.thread_ts == thread_ts]

    def visible(self, viewer: str) -> list[Message]:
        """Every message ``viewer`` may see: their channels, and ephemeral ones only if theirs."""
        mine = {c.id for c in self.channels.values() if viewer in c.members}
        return [m for m in self.messages if m.channel in mine and m.ephemeral_to in (None, viewer)]

    def snapshot(self, viewer: str) -> Json:
        """All the page needs to draw ``viewer``'s Slack."""
        person = self.users[viewer]
        channels = [c.shown() for c in self.channels.values() if viewer in c.members]
        mine = {c["id"] for c in channels}
        return {
            "me": person.shown(),
            "team": self.teams[person.team].__dict__,
            "bot": BOT_USER,
            "teams": [t.__dict__ for t in self.teams.values()],
            "people": [u.shown() for u in self.users.values()],
            "channels": channels,
            "messages": [m.shown() for m in self.visible(viewer)],
            "modal": self.modals.get(viewer),
            "home": self.homes.get(viewer),
            "assistant": [dict(t) for (c, _), t in self.assistant.items() if c in mine],
        }

    # -- changing -----------------------------------------------------------------------------

    def post(self, message: Message) -> Message:
        self.messages.append(message)
        self._tell(Change("message", message.shown(), message.channel, message.ephemeral_to))
        # Slack takes an assistant thread's status away once the app answers in the thread.
        thread = self.assistant.get((message.channel, message.thread_ts or ""))
        if thread and thread.get("status") and message.user == BOT_USER:
            self.set_assistant(message.channel, str(message.thread_ts), status="")
        return message

    def set_assistant(self, channel: str, thread_ts: str, **settings: Any) -> Json:
        """Keeps an assistant thread's status, prompts or title, told to whoever sees its DM."""
        key = (channel, thread_ts)
        thread = self.assistant.setdefault(key, {"channel": channel, "thread_ts": thread_ts})
        thread.update(settings)
        self._tell(Change("assistant", dict(thread), channel))
        return thread

    def update(self, message: Message, *, text: str, blocks: list[Json]) -> None:
        message.text, message.blocks, message.edited = text, blocks, True
        self._tell(Change("message", message.shown(), message.channel, message.ephemeral_to))

    def grow(self, message: Message, text: str, *, blocks: list[Json] | None = None) -> None:
        """A streamed message's next words (and, once it stops, its blocks); not an edit."""
        message.text += text
        if blocks is not None:
            message.blocks = blocks
        self._tell(Change("message", message.shown(), message.channel, message.ephemeral_to))

    def react(self, message: Message, name: str, *, add: bool) -> None:
        if add:
            message.reactions.add(name)
        else:
            message.reactions.discard(name)
        self._tell(Change("message", message.shown(), message.channel, message.ephemeral_to))

    def open_modal(self, user: str, view: Json) -> Json:
        shown = {"id": self.next_view_id(), **view}
        self.modals[user] = shown
        self._tell(Change("modal", {"view": shown}, only=user))
        return shown

    def close_modal(self, user: str) -> None:
        if self.modals.pop(user, None) is not None:
            self._tell(Change("modal", {"view": None}, only=user))

    def publish_home(self, user: str, view: Json) -> Json:
        shown = {"id": self.next_view_id(), **view}
        self.homes[user] = shown
        self._tell(Change("home", {"view": shown}, only=user))
        return shown

    def start_afresh(self, fresh: Workspace) -> None:
        """Takes ``fresh``'s channels and drops every message, modal and App Home view.

        Timestamps carry on from where they were: a page still holding an old message must
        not mistake a new one for it. Every open page is told (a ``reset`` change) and reloads.
        """
        self.channels.clear()
        self.channels.update(fresh.channels)
        self.messages.clear()
        self.modals.clear()
        self.homes.clear()
        self.assistant.clear()
        self._tell(Change("reset", {}))

    def _tell(self, change: Change) -> None:
        for listener in list(self.listeners):
            listener(change)

    def may_see(self, viewer: str, change: Change) -> bool:
        if change.only is not None and change.only != viewer:
            return False
        channel = self.channels.get(change.channel or "")
        return change.channel is None or (channel is not None and viewer in channel.members)
