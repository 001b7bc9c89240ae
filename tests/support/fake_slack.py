"""A fake Slack Web API on loopback: an in-memory workspace that records every call; never calls Slack.

One ``FakeSlack`` is one workspace: a team, a bot user, people with verified emails, channels
and the messages posted in them. The bot under test is pointed at it through ``SLACK_API_URL``
(``base_url``); every Web API call it makes is recorded in ``calls`` with its parameters, and
the handful of methods the bot uses answer the way Slack does. ``response_url`` posts (slash
commands) land in ``responses``. The local sandbox reuses this workspace model.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

__all__ = ["Call", "FakeSlack", "Message", "SlackUser"]

BOT_TOKEN = "xoxb-fake-bot-token"

Json = dict[str, Any]
Handler = Callable[[Json], Awaitable[Json]]


@dataclass
class SlackUser:
    id: str
    name: str
    email: str | None = None
    is_bot: bool = False


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


@dataclass(frozen=True)
class Call:
    """One Web API call as received: the method name and its decoded parameters."""

    method: str
    params: Json


class FakeSlack:
    """An in-memory Slack workspace served over HTTP on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self, *, team_id: str = "T0FIESTA", bot_user_id: str = "UBOT") -> None:
        self.team_id, self.bot_user_id, self.bot_id = team_id, bot_user_id, "BBOT"
        self.users: dict[str, SlackUser] = {}
        self.messages: list[Message] = []
        self.views: list[Json] = []
        self.calls: list[Call] = []
        self.responses: list[Json] = []
        self._ts = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.add_user(bot_user_id, "countersign", is_bot=True)

    # -- the workspace ------------------------------------------------------------------

    def add_user(
        self, user_id: str, name: str, email: str | None = None, *, is_bot: bool = False
    ) -> SlackUser:
        self.users[user_id] = SlackUser(user_id, name, email, is_bot)
        return self.users[user_id]

    def next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    @property
    def base_url(self) -> str:
        """What ``SLACK_API_URL`` is set to (slack_sdk wants the trailing slash)."""
        return f"{self.url}/api/"

    def response_url(self, name: str = "cmd") -> str:
        return f"{self.url}/response/{name}"

    def called(self, method: str) -> list[Json]:
        """The parameters of every call of one method, in order."""
        return [call.params for call in self.calls if call.method == method]

    def message(self, channel: str, ts: str) -> Message:
        return next(m for m in self.messages if m.channel == channel and m.ts == ts)

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        return [m for m in self.messages if m.channel == channel and m.thread_ts == thread_ts]

    # -- serving -------------------------------------------------------------------------

    async def start(self) -> FakeSlack:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/response/{name}", self._response)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await _params(request)
        self.calls.append(Call(method, params))
        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            return web.json_response({"ok": False, "error": "invalid_auth"})
        handler: Handler | None = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        return web.json_response(await handler(params))

    async def _response(self, request: web.Request) -> web.Response:
        self.responses.append(await request.json())
        return web.Response(text="ok")

    # -- methods ---------------------------------------------------------------------------

    async def _auth_test(self, params: Json) -> Json:
        return {
            "ok": True, "url": "https://fiesta.slack.example/", "team": "Fiesta Foods",
            "user": "countersign", "team_id": self.team_id, "user_id": self.bot_user_id,
            "bot_id": self.bot_id, "is_enterprise_install": False,
        }  # fmt: skip

    async def _chat_postMessage(self, params: Json) -> Json:
        if not params.get("text") and not params.get("blocks"):
            return {"ok": False, "error": "no_text"}
        message = Message(
            channel=params["channel"], ts=self.next_ts(), text=params.get("text", ""),
            blocks=params.get("blocks") or [], thread_ts=params.get("thread_ts"),
            user=self.bot_user_id, reply_broadcast=bool(params.get("reply_broadcast")),
        )  # fmt: skip
        self.messages.append(message)
        return {
            "ok": True,
            "channel": message.channel,
            "ts": message.ts,
            "message": _shown(message),
        }

    async def _chat_update(self, params: Json) -> Json:
        try:
            message = self.message(params["channel"], params["ts"])
        except StopIteration:
            return {"ok": False, "error": "message_not_found"}
        message.text, message.blocks = params.get("text", ""), params.get("blocks") or []
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    async def _chat_postEphemeral(self, params: Json) -> Json:
        message = Message(
            channel=params["channel"], ts=self.next_ts(), text=params.get("text", ""),
            blocks=params.get("blocks") or [], thread_ts=params.get("thread_ts"),
            user=self.bot_user_id, ephemeral_to=params["user"],
        )  # fmt: skip
        self.messages.append(message)
        return {"ok": True, "message_ts": message.ts}

    async def _reactions_add(self, params: Json) -> Json:
        self._find(params).reactions.add(params["name"])
        return {"ok": True}

    async def _reactions_remove(self, params: Json) -> Json:
        self._find(params).reactions.discard(params["name"])
        return {"ok": True}

    def _find(self, params: Json) -> Message:
        channel, ts = params["channel"], params["timestamp"]
        found = [m for m in self.messages if m.channel == channel and m.ts == ts]
        if found:
            return found[0]
        # A person's message the bot reacts to: the workspace learns of it here.
        message = Message(channel=channel, ts=ts, text="")
        self.messages.append(message)
        return message

    async def _users_info(self, params: Json) -> Json:
        user = self.users.get(params["user"])
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        profile: Json = {"real_name": user.name, "display_name": user.name}
        if user.email:
            profile["email"] = user.email
        return {
            "ok": True,
            "user": {"id": user.id, "team_id": self.team_id, "name": user.name,
                     "real_name": user.name, "is_bot": user.is_bot, "deleted": False,
                     "profile": profile},
        }  # fmt: skip

    async def _views_open(self, params: Json) -> Json:
        if not params.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        view = _view(params["view"])
        self.views.append({"kind": "modal", "view": view})
        return {"ok": True, "view": {"id": f"V{len(self.views)}", **view}}

    async def _views_publish(self, params: Json) -> Json:
        view = _view(params["view"])
        self.views.append({"kind": "home", "user_id": params["user_id"], "view": view})
        return {"ok": True, "view": {"id": f"V{len(self.views)}", **view}}

    async def _conversations_info(self, params: Json) -> Json:
        channel = params["channel"]
        is_im = channel.startswith("D")
        return {"ok": True, "channel": {"id": channel, "is_im": is_im, "is_channel": not is_im}}


def _view(raw: Any) -> Json:
    return json.loads(raw) if isinstance(raw, str) else dict(raw)


def _shown(message: Message) -> Json:
    return {"type": "message", "text": message.text, "ts": message.ts, "user": message.user}


async def _params(request: web.Request) -> Json:
    """Slack takes query, form fields or JSON; fields holding JSON (blocks, view) are decoded."""
    if request.method == "GET":
        return dict(request.query)
    if request.content_type == "application/json":
        body = await request.json()
        return {**request.query, **dict(body)}
    form = await request.post()
    params: Json = {}
    for key, value in [*request.query.items(), *form.items()]:
        text = str(value)
        params[key] = json.loads(text) if key in {"blocks", "view", "attachments"} else text
    return params
