"""A fake Bot Connector service on loopback: records what the bot sends to Teams; never calls Teams.

The bot under test replies, posts cards and updates them through the connector at the
activity's ``serviceUrl``; pointing that at ``FakeConnector.url`` records every call:
``POST /v3/conversations/{id}/activities[/{replyToId}]`` (new messages and replies), ``PUT
/v3/conversations/{id}/activities/{activityId}`` (updates), ``GET …/members/{userId}`` (the
member lookup that gives a person's email on first contact) and ``POST /v3/conversations``
(opening a 1:1 chat with a person).

Opening a chat is answered as Teams does: 400 unless it names the bot, one member by ``id``
(their ``29:`` id or AAD object id; an ``aadObjectId`` alone is refused), ``isGroup`` false and
the tenant; 403 when the app is not installed for that person; otherwise the chat's id, the
same one each time for the same person.

A streamed reply (activities carrying a ``streaminfo`` entity) is checked as Teams checks it:
only in a 1:1 chat (an ``a:`` conversation), each update's ``streamSequence`` higher than the
last, its text the text streamed so far and more, nothing after the ``final`` message; every
update after the first names the stream by the id the first one was given. ``refuse`` makes
the connector refuse chosen posts (a failure midway); a refused post is kept in ``calls`` with
its status, and left out of ``posted()``.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["Call", "FakeConnector", "Member"]

Json = dict[str, Any]


# The Entra tenant of the fake's people (Fiesta Foods'), unless a member says otherwise.
TENANT = "8d4f2c1e-0000-4000-8000-00000000f1e5"


@dataclass(frozen=True)
class Member:
    """A person in the fake tenant: their ``29:`` address, AAD object id, name and email, and
    the tenant their directory entry is of (another one for an external user in a chat)."""

    address: str
    aad: str
    name: str
    email: str | None = None
    # Whether the app is installed for them (personal scope): Teams opens no chat otherwise.
    installed: bool = True
    tenant: str = TENANT


@dataclass
class Call:
    """One request the bot made: its verb, conversation, activity id (if any) and JSON body."""

    method: str
    conversation: str
    activity_id: str | None
    body: Json = field(default_factory=dict)
    member: str | None = None
    created: str | None = None  # the id the connector gave a new message
    refused: int | None = None  # the error status it was answered with, if any
    at: float = field(default_factory=time.monotonic)  # when it arrived

    @property
    def cards(self) -> list[Json]:
        return [
            a["content"]
            for a in self.body.get("attachments") or []
            if a.get("contentType") == "application/vnd.microsoft.card.adaptive"
        ]

    @property
    def stream(self) -> Json | None:
        """The activity's ``streaminfo`` entity, when it is part of a streamed reply."""
        return stream_info(self.body)


def stream_info(body: Json) -> Json | None:
    return next((e for e in body.get("entities") or [] if e.get("type") == "streaminfo"), None)


@dataclass
class _Stream:
    """What Teams knows of one streamed reply: its last sequence number and text, and its end."""

    sequence: int
    text: str
    ended: bool = False


def _out_of_order(stream: _Stream, info: Json, text: str) -> tuple[int, str] | None:
    """Why Teams refuses this next part of a stream it knows (400), or None."""
    if stream.ended:
        return 400, "BadArgument: Content stream is not allowed on a completed stream"
    if info.get("streamType") == "final":
        return None
    if int(info["streamSequence"]) <= stream.sequence:
        return 400, "BadArgument: streamSequence must increase"
    if info.get("streamType") == "streaming" and not text.startswith(stream.text):
        return 400, "BadArgument: a streamed update carries the text streamed before it"
    return None


class FakeConnector:
    """Answers like the Bot Connector for the calls the bot makes, and keeps them in ``calls``."""

    def __init__(self) -> None:
        self.members: dict[str, Member] = {}
        self.calls: list[Call] = []
        self.tenant: str | None = None  # the tenant chats may be opened in (None: any)
        self.chats: dict[str, str] = {}  # AAD object id → the 1:1 chat opened with them
        # A post's body → the (status, error) Teams answers it with instead, or None to accept it.
        self.refuse: Callable[[Json], tuple[int, str] | None] | None = None
        self.streams: dict[str, _Stream] = {}  # stream id → what Teams has shown of it
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.url = ""

    def add(self, member: Member) -> Member:
        self.members[member.address] = member
        return member

    async def start(self) -> None:
        app = web.Application()
        base = "/v3/conversations/{conversation}"
        app.router.add_post("/v3/conversations", self._create)
        app.router.add_post(base + "/activities", self._post)
        app.router.add_post(base + "/activities/{activity}", self._post)
        app.router.add_put(base + "/activities/{activity}", self._put)
        app.router.add_get(base + "/members/{member}", self._member)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _post(self, request: web.Request) -> web.Response:
        body = await request.json()
        reply_to = request.match_info.get("activity")
        conversation = request.match_info["conversation"]
        refused = (self.refuse(body) if self.refuse else None) or self._unstreamable(
            conversation, body
        )
        if refused is not None:
            status, error = refused
            self.calls.append(Call("POST", conversation, reply_to, body, refused=status))
            return web.json_response({"error": {"code": error, "message": error}}, status=status)
        created = self._streamed(body) or f"1{next(self._ids):012d}"
        self.calls.append(Call("POST", conversation, reply_to, body, created=created))
        return web.json_response({"id": created}, status=201)

    def _unstreamable(self, conversation: str, body: Json) -> tuple[int, str] | None:
        """Why Teams would refuse a streamed update (400), or None for one it takes."""
        info = stream_info(body)
        if info is None:
            return None
        if not conversation.startswith("a:"):
            return 400, "BadArgument: Streaming API is not enabled for this conversation"
        final = info.get("streamType") == "final"
        if final != (body.get("type") == "message") or final == ("streamSequence" in info):
            return 400, "BadArgument: a final message is a message without a streamSequence"
        stream = self.streams.get(info.get("streamId") or "")
        if stream is None:
            return None if not info.get("streamId") and not final else (400, "BadArgument")
        return _out_of_order(stream, info, str(body.get("text") or ""))

    def _streamed(self, body: Json) -> str | None:
        """The stream id an accepted streamed update is answered with (a new one for the first)."""
        info = stream_info(body)
        if info is None:
            return None
        if not info.get("streamId"):
            created = f"1{next(self._ids):012d}"
            self.streams[created] = _Stream(int(info["streamSequence"]), "")
            if info.get("streamType") == "streaming":
                self.streams[created].text = str(body.get("text") or "")
            return created
        stream = self.streams[str(info["streamId"])]
        if info.get("streamType") == "final":
            stream.ended = True
        else:
            stream.sequence = int(info["streamSequence"])
            if info.get("streamType") == "streaming":
                stream.text = str(body.get("text") or "")
        return str(info["streamId"])

    async def _put(self, request: web.Request) -> web.Response:
        body = await request.json()
        activity = request.match_info["activity"]
        self.calls.append(Call("PUT", request.match_info["conversation"], activity, body))
        return web.json_response({"id": activity})

    def _named(self, body: Json) -> Member | str:
        """The one member a create names, or why Teams would refuse it (400)."""
        members = body.get("members") or []
        tenant = body.get("tenantId") or ((body.get("channelData") or {}).get("tenant") or {}).get(
            "id"
        )
        if body.get("isGroup") is not False or len(members) != 1:
            return "a 1:1 chat has isGroup false and exactly one member"
        if not (body.get("bot") or {}).get("id"):
            return "the bot is not named"
        if not tenant or (self.tenant is not None and tenant != self.tenant):
            return "no tenant, or another tenant"
        wanted = members[0].get("id")
        found = next((m for m in self.members.values() if wanted in (m.address, m.aad)), None)
        return found or "the member's id is neither a 29: id nor an AAD object id in the tenant"

    async def _create(self, request: web.Request) -> web.Response:
        body = await request.json()
        named = self._named(body)
        if isinstance(named, str):
            self.calls.append(Call("CREATE", "", None, body))
            return web.json_response({"error": {"code": "BadArgument", "message": named}}, 400)
        if not named.installed:
            self.calls.append(Call("CREATE", "", None, body, member=named.aad))
            error = {"code": "Forbidden", "message": "The bot is not installed for the user"}
            return web.json_response({"error": error}, status=403)
        chat = self.chats.setdefault(named.aad, f"a:1{named.aad}-personal")
        self.calls.append(Call("CREATE", chat, None, body, member=named.aad, created=chat))
        return web.json_response({"id": chat}, status=201)

    async def _member(self, request: web.Request) -> web.Response:
        address = request.match_info["member"]
        self.calls.append(Call("GET", request.match_info["conversation"], None, member=address))
        # Teams finds a member by their 29: id, their AAD object id or their UPN (email here).
        member = next(
            (m for m in self.members.values() if address in (m.address, m.aad, m.email)), None
        )
        chat = request.match_info["conversation"]
        if (
            member is not None
            and chat in self.chats.values()
            and self.chats.get(member.aad) != chat
        ):
            member = None  # a 1:1 chat has one member besides the bot
        if member is None:
            return web.json_response(
                {"error": {"code": "MemberNotFoundInConversation"}}, status=404
            )
        return web.json_response(
            {
                "id": member.address,
                "aadObjectId": member.aad,
                "name": member.name,
                "email": member.email,
                "userPrincipalName": member.email,
                "userRole": "user",
                "tenantId": member.tenant,
            }
        )

    # -- reading what was sent --------------------------------------------------------------

    def posted(self) -> list[Call]:
        """What Teams took (a refused post is not shown to anyone)."""
        return [c for c in self.calls if c.method == "POST" and c.refused is None]

    def refused(self) -> list[Call]:
        return [c for c in self.calls if c.method == "POST" and c.refused is not None]

    def streamed(self, conversation: str) -> list[Call]:
        """The parts of streamed replies Teams took in a conversation (updates, then the final), in order."""
        return [c for c in self.posted() if c.conversation == conversation and c.stream]

    def messages(self) -> list[Call]:
        return [c for c in self.posted() if c.body.get("type") == "message"]

    def card_posts(self) -> list[Call]:
        return [c for c in self.messages() if c.cards]

    def texts(self) -> list[str]:
        return [str(c.body.get("text")) for c in self.messages() if c.body.get("text")]

    def updates(self) -> list[Call]:
        """Every card updated in place (a message's words edited are ``edits``)."""
        return [c for c in self.calls if c.method == "PUT" and c.cards]

    def edits(self) -> list[Call]:
        """Every message whose words were replaced in place (an answer above a decided card)."""
        return [c for c in self.calls if c.method == "PUT" and not c.cards]

    def lookups(self) -> list[Call]:
        return [c for c in self.calls if c.method == "GET"]

    def creations(self) -> list[Call]:
        """Every attempt to open a 1:1 chat, refused ones included (their conversation is "")."""
        return [c for c in self.calls if c.method == "CREATE"]

    def chat_with(self, member: Member) -> str:
        """The 1:1 chat opened with ``member``; fails the test when there is none."""
        assert member.aad in self.chats, f"no chat was opened with {member.name}"
        return self.chats[member.aad]

    def in_conversation(self, conversation: str) -> list[Call]:
        """What the bot sent or updated in one conversation, in order."""
        return [
            c
            for c in self.calls
            if c.conversation == conversation and c.method in ("POST", "PUT") and c.refused is None
        ]
