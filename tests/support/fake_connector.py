"""A fake Bot Connector service on loopback: records what the bot sends to Teams; never calls Teams.

The bot under test replies, posts cards and updates them through the connector at the
activity's ``serviceUrl``; pointing that at ``FakeConnector.url`` records every call:
``POST /v3/conversations/{id}/activities[/{replyToId}]`` (new messages and replies), ``PUT
/v3/conversations/{id}/activities/{activityId}`` (updates) and ``GET …/members/{userId}`` (the
member lookup that gives a person's email on first contact).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["Call", "FakeConnector", "Member"]

Json = dict[str, Any]


@dataclass(frozen=True)
class Member:
    """A person in the fake tenant: their ``29:`` address, AAD object id, name and email."""

    address: str
    aad: str
    name: str
    email: str | None = None


@dataclass
class Call:
    """One request the bot made: its verb, conversation, activity id (if any) and JSON body."""

    method: str
    conversation: str
    activity_id: str | None
    body: Json = field(default_factory=dict)
    member: str | None = None
    created: str | None = None  # the id the connector gave a new message

    @property
    def cards(self) -> list[Json]:
        return [
            a["content"]
            for a in self.body.get("attachments") or []
            if a.get("contentType") == "application/vnd.microsoft.card.adaptive"
        ]


class FakeConnector:
    """Answers like the Bot Connector for the calls the bot makes, and keeps them in ``calls``."""

    def __init__(self) -> None:
        self.members: dict[str, Member] = {}
        self.calls: list[Call] = []
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.url = ""

    def add(self, member: Member) -> Member:
        self.members[member.address] = member
        return member

    async def start(self) -> None:
        app = web.Application()
        base = "/v3/conversations/{conversation}"
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
        created = f"1{next(self._ids):012d}"
        self.calls.append(
            Call("POST", request.match_info["conversation"], reply_to, body, created=created)
        )
        return web.json_response({"id": created}, status=201)

    async def _put(self, request: web.Request) -> web.Response:
        body = await request.json()
        activity = request.match_info["activity"]
        self.calls.append(Call("PUT", request.match_info["conversation"], activity, body))
        return web.json_response({"id": activity})

    async def _member(self, request: web.Request) -> web.Response:
        address = request.match_info["member"]
        self.calls.append(Call("GET", request.match_info["conversation"], None, member=address))
        member = self.members.get(address)
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
                "tenantId": "tenant",
            }
        )

    # -- reading what was sent --------------------------------------------------------------

    def posted(self) -> list[Call]:
        return [c for c in self.calls if c.method == "POST"]

    def messages(self) -> list[Call]:
        return [c for c in self.posted() if c.body.get("type") == "message"]

    def card_posts(self) -> list[Call]:
        return [c for c in self.messages() if c.cards]

    def texts(self) -> list[str]:
        return [str(c.body.get("text")) for c in self.messages() if c.body.get("text")]

    def updates(self) -> list[Call]:
        return [c for c in self.calls if c.method == "PUT"]

    def lookups(self) -> list[Call]:
        return [c for c in self.calls if c.method == "GET"]
