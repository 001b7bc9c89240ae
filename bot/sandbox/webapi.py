"""Answers the bot's Slack Web API calls from the in-memory workspace; never calls Slack itself.

The bot is pointed here through ``SLACK_API_URL``. Every call is recorded in ``calls`` with its
parameters, and the methods the bot uses (``auth.test``, ``chat.*``, ``reactions.*``,
``users.info``, ``views.*``, ``conversations.info``, ``conversations.open``, which gives the
app's DM with a person, ``assistant.threads.*``, whose status, prompts and title are kept
per thread in ``threads``, and the streams of ``chat.startStream`` / ``appendStream`` /
``stopStream``, ``bot.sandbox.streams``) answer the way Slack does. Posts to a
``response_url`` (slash commands) are kept in ``responses`` and shown as ephemeral messages.
The tests drive it on its own (``start``); the sandbox mounts its routes beside the page.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.sandbox import conversations, streams
from bot.sandbox.workspace import BOT_ID, BOT_USER, Message, SlackUser, Workspace

__all__ = ["BOT_TOKEN", "Call", "WebApi"]

# Not a secret: the token the sandbox and the tests hand the bot; it opens nothing but loopback.
BOT_TOKEN = "xoxb-sandbox-bot-token"  # noqa: S105
# How many answers Slack takes through one response_url.
RESPONSE_USES = 5

Json = dict[str, Any]
Handler = Callable[[Json], Awaitable[Json]]


@dataclass(frozen=True)
class Call:
    """One Web API call as received: the method name and its decoded parameters."""

    method: str
    params: Json


class WebApi:
    """Slack's Web API over a ``Workspace``, served on loopback (port chosen by the OS)."""

    def __init__(
        self,
        workspace: Workspace | None = None,
        *,
        team_id: str = "T0FIESTA",
        token: str = BOT_TOKEN,
    ) -> None:
        self.workspace = workspace or Workspace(team_id=team_id)
        self.token = token
        self.calls: list[Call] = []
        self.responses: list[Json] = []
        # response_url name → (user, channel) of the slash command it answers; None: only recorded
        self.response_targets: dict[str, tuple[str, str] | None] = {}
        # response_url name → (channel, ts) of the ephemeral message a press was made on, or
        # that the URL itself posted, which an answer with ``replace_original`` replaces, as
        # Slack does
        self.response_replaces: dict[str, tuple[str, str]] = {}
        # response_url name → how many answers it took: Slack takes five, then says used_url
        self.response_uses: dict[str, int] = {}
        self.triggers: dict[str, str] = {}  # trigger_id → the user whose press made it
        self._runner: web.AppRunner | None = None
        self.url = ""

    # -- the workspace, for tests ---------------------------------------------------------------

    @property
    def team_id(self) -> str:
        return self.workspace.home_team

    @property
    def bot_user_id(self) -> str:
        return BOT_USER

    @property
    def threads(self) -> dict[tuple[str, str], Json]:
        """(channel, thread_ts) → an assistant thread's "status", "prompts" and "title"."""
        return self.workspace.assistant

    @property
    def messages(self) -> list[Message]:
        return self.workspace.messages

    def add_user(
        self,
        user_id: str,
        name: str,
        email: str | None = None,
        *,
        team: str | None = None,
        email_confirmed: bool | None = True,
    ) -> SlackUser:
        return self.workspace.add_user(
            user_id, name, email, team=team, email_confirmed=email_confirmed
        )

    def message(self, channel: str, ts: str) -> Message:
        return self.workspace.message(channel, ts)

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        return self.workspace.thread(channel, thread_ts)

    def called(self, method: str) -> list[Json]:
        """The parameters of every call of one method, in order."""
        return [call.params for call in self.calls if call.method == method]

    @property
    def base_url(self) -> str:
        """What ``SLACK_API_URL`` is set to (slack_sdk wants the trailing slash)."""
        return f"{self.url}/api/"

    def response_url(
        self, *, to: tuple[str, str] | None = None, replaces: tuple[str, str] | None = None
    ) -> str:
        """A new response URL answering ``to`` = (user, channel) privately; with ``replaces``
        (channel, ts), an answer that says ``replace_original`` replaces that message.

        Its name is random and long: anyone who could guess one could post as the bot into a
        person's view (the first names were a counter anyone could count along).
        """
        name = secrets.token_urlsafe(32)
        self.response_targets[name] = to
        if replaces is not None:
            self.response_replaces[name] = replaces
        return f"{self.url}/response/{name}"

    # -- serving --------------------------------------------------------------------------------

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/response/{name}", self._response)

    async def start(self, host: str = "127.0.0.1") -> WebApi:
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, host, 0).start()
        self.url = f"http://{host}:{self._runner.addresses[0][1]}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await _params(request)
        self.calls.append(Call(method, params))
        # Every method takes the bot token, except finishing an install, which takes the app's
        # client id and secret (HTTP Basic) in exchange for one.
        authorization = request.headers.get("Authorization", "")
        if method == "oauth.v2.access":
            allowed = authorization.startswith("Basic ")
        else:
            allowed = authorization == f"Bearer {self.token}"
        if not allowed:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        handler: Handler | None = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        return web.json_response(await handler(params))

    async def _response(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self.response_targets or self.response_uses.get(name, 0) >= RESPONSE_USES:
            # Slack's words for a URL it no longer takes (five answers were sent through it).
            return _refused(404, "expired_url or used_url")
        if request.content_type != "application/json":
            return _refused(415, "Send JSON (Content-Type: application/json).")
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            return _refused(400, "Send a JSON object.")
        if not isinstance(body, dict):
            return _refused(400, "Send a JSON object.")
        self.response_uses[name] = self.response_uses.get(name, 0) + 1
        self.responses.append(body)
        target = self.response_targets[name]
        replaced = self.response_replaces.get(name)
        if replaced is not None and body.get("replace_original"):
            return self._replace(replaced, body)
        if target is not None:
            user, channel = target
            ts = self.workspace.next_ts()
            self.workspace.post(
                Message(
                    channel=channel,
                    ts=ts,
                    text=str(body.get("text", "")),
                    blocks=body.get("blocks") or [],
                    user=BOT_USER,
                    ephemeral_to=user,
                )
            )
            # A slash command's later answers may replace the one it posted.
            self.response_replaces.setdefault(name, (channel, ts))
        return web.Response(text="ok")

    def _replace(self, where: tuple[str, str], body: Json) -> web.Response:
        """An answer to a press on an ephemeral message, replacing that message."""
        try:
            original = self.workspace.message(*where)
        except StopIteration:
            return _refused(404, "The message to replace is gone.")
        self.workspace.update(
            original, text=str(body.get("text", "")), blocks=body.get("blocks") or []
        )
        return web.Response(text="ok")

    # -- methods --------------------------------------------------------------------------------

    async def _conversations_replies(self, params: Json) -> Json:
        """A thread's messages after ``oldest`` (the app's own, as this workspace holds them)."""
        channel, thread = str(params.get("channel") or ""), str(params.get("ts") or "")
        return self._after(params, lambda m: m.channel == channel and thread in (m.ts, m.thread_ts))

    async def _conversations_history(self, params: Json) -> Json:
        """A channel's top-level messages after ``oldest``."""
        channel = str(params.get("channel") or "")
        return self._after(params, lambda m: m.channel == channel and m.thread_ts is None)

    def _after(self, params: Json, wanted: Callable[[Message], bool]) -> Json:
        oldest = float(params.get("oldest") or 0)
        found = [
            {**m.shown(), **({"bot_id": BOT_ID} if m.user == BOT_USER else {})}
            for m in self.workspace.messages
            if wanted(m) and not m.ephemeral_to and float(m.ts) > oldest
        ]
        return {"ok": True, "messages": found, "has_more": False}

    async def _auth_test(self, params: Json) -> Json:
        team = self.workspace.teams[self.team_id]
        return {
            "ok": True,
            "url": f"https://{team.domain}.slack.example/",
            "team": team.name,
            "user": "countersign",
            "team_id": team.id,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    async def _oauth_v2_access(self, params: Json) -> Json:
        """Finishes an install: the code names the workspace being installed (any team here)."""
        team = (
            self.workspace.teams.get(str(params.get("code") or ""))
            or self.workspace.teams[self.team_id]
        )
        return {
            "ok": True,
            "app_id": "A0COUNTERSIGN",
            "access_token": BOT_TOKEN,
            "token_type": "bot",
            "scope": "chat:write,commands",
            "bot_user_id": BOT_USER,
            "team": {"id": team.id, "name": team.name},
            "enterprise": None,
            "is_enterprise_install": False,
            "authed_user": {"id": "UINSTALLER"},
        }

    async def _chat_postMessage(self, params: Json) -> Json:  # noqa: N802 (Slack's method name)
        if not params.get("text") and not params.get("blocks"):
            return {"ok": False, "error": "no_text"}
        message = self.workspace.post(
            Message(
                channel=self.workspace.channel_for(str(params["channel"])),
                ts=self.workspace.next_ts(),
                text=params.get("text", ""),
                blocks=params.get("blocks") or [],
                thread_ts=params.get("thread_ts") or None,
                user=BOT_USER,
                reply_broadcast=_truthy(params.get("reply_broadcast")),
            )
        )
        shown: Json = {
            "type": "message",
            "text": message.text,
            "blocks": message.blocks,
            "ts": message.ts,
            "user": BOT_USER,
            "bot_id": BOT_ID,
        }
        if message.thread_ts:
            shown["thread_ts"] = message.thread_ts
        return {"ok": True, "channel": message.channel, "ts": message.ts, "message": shown}

    async def _chat_update(self, params: Json) -> Json:
        try:
            message = self.workspace.message(params["channel"], params["ts"])
        except StopIteration:
            return {"ok": False, "error": "message_not_found"}
        self.workspace.update(
            message, text=params.get("text", ""), blocks=params.get("blocks") or []
        )
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    async def _chat_postEphemeral(self, params: Json) -> Json:  # noqa: N802 (Slack's method name)
        known = self.workspace.channels.get(self.workspace.channel_for(str(params["channel"])))
        if known is not None and params["user"] not in known.members:
            # Slack refuses it; kept, it would be a message nobody can ever see (a DM's
            # ephemeral addressed to someone else).
            return {"ok": False, "error": "user_not_in_channel"}
        message = self.workspace.post(
            Message(
                channel=self.workspace.channel_for(str(params["channel"])),
                ts=self.workspace.next_ts(),
                text=params.get("text", ""),
                blocks=params.get("blocks") or [],
                thread_ts=params.get("thread_ts") or None,
                user=BOT_USER,
                ephemeral_to=params["user"],
            )
        )
        return {"ok": True, "message_ts": message.ts}

    async def _chat_startStream(self, params: Json) -> Json:  # noqa: N802 (Slack's method name)
        return streams.start(self.workspace, params)

    async def _chat_appendStream(self, params: Json) -> Json:  # noqa: N802 (Slack's method name)
        return streams.append(self.workspace, params)

    async def _chat_stopStream(self, params: Json) -> Json:  # noqa: N802 (Slack's method name)
        return streams.stop(self.workspace, params)

    async def _reactions_add(self, params: Json) -> Json:
        self.workspace.react(self._find(params), params["name"], add=True)
        return {"ok": True}

    async def _reactions_remove(self, params: Json) -> Json:
        self.workspace.react(self._find(params), params["name"], add=False)
        return {"ok": True}

    async def _assistant_threads_setStatus(self, params: Json) -> Json:  # noqa: N802 - Slack's
        status = params.get("status")
        return self._thread_set(params, status=status) if isinstance(status, str) else _invalid()

    async def _assistant_threads_setSuggestedPrompts(self, params: Json) -> Json:  # noqa: N802
        prompts = params.get("prompts")
        if not (isinstance(prompts, list) and 0 < len(prompts) <= _MAX_PROMPTS):
            return _invalid()
        if not all(isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts):
            return _invalid()
        return self._thread_set(params, prompts=prompts, prompts_title=params.get("title"))

    async def _assistant_threads_setTitle(self, params: Json) -> Json:  # noqa: N802 - Slack's
        title = params.get("title")
        return self._thread_set(params, title=title) if title else _invalid()

    def _thread_set(self, params: Json, **settings: Any) -> Json:
        """Keeps an assistant thread's status, prompts or title, as the split view shows them."""
        channel, thread_ts = params.get("channel_id"), params.get("thread_ts")
        if not (channel and thread_ts):
            return _invalid()
        # Kept by the workspace, which tells the page: the pane shows it as it changes.
        self.workspace.set_assistant(str(channel), str(thread_ts), **settings)
        return {"ok": True}

    def _find(self, params: Json) -> Message:
        channel, ts = params["channel"], params["timestamp"]
        try:
            return self.workspace.message(channel, ts)
        except StopIteration:
            # A message the workspace never saw posted (tests deliver events directly): it
            # learns of it here, as the target of the reaction.
            message = Message(channel=channel, ts=ts, text="")
            self.workspace.messages.append(message)
            return message

    async def _users_lookupByEmail(self, params: Json) -> Json:  # noqa: N802 - Slack's method name
        """A member of the workspace by email, in any case, as Slack finds them."""
        email = str(params.get("email") or "").lower()
        found = next(
            (u for u in self.workspace.users.values() if u.email and u.email.lower() == email),
            None,
        )
        if found is None:
            return {"ok": False, "error": "users_not_found"}
        return await self._users_info({"user": found.id})

    async def _users_info(self, params: Json) -> Json:
        user = self.workspace.users.get(params["user"])
        if user is None:
            return {"ok": False, "error": "user_not_found"}
        profile: Json = {"real_name": user.name, "display_name": user.name, "title": user.title}
        if user.email:
            profile["email"] = user.email
        shown: Json = {
            "id": user.id,
            "team_id": user.team,
            "name": user.name,
            "real_name": user.name,
            "is_bot": user.is_bot,
            "deleted": False,
            "profile": profile,
        }
        if user.email_confirmed is not None:
            shown["is_email_confirmed"] = user.email_confirmed
        team = self.workspace.teams.get(user.team)
        if team is not None and team.enterprise:
            # As Slack answers for a member of an Enterprise Grid org: the org and its workspaces.
            shown["enterprise_user"] = {
                "id": user.id,
                "enterprise_id": team.enterprise,
                "enterprise_name": team.name,
                "is_admin": False,
                "is_owner": False,
                "teams": [team.id, *user.org_teams],
            }
        return {"ok": True, "user": shown}

    async def _views_open(self, params: Json) -> Json:
        trigger = str(params.get("trigger_id") or "")
        if not trigger:
            return {"ok": False, "error": "invalid_trigger_id"}
        user = self.triggers.pop(trigger, "")
        view = self.workspace.open_modal(user, _view(params["view"]))
        return {"ok": True, "view": view}

    async def _views_update(self, params: Json) -> Json:
        view_id = str(params.get("view_id") or "")
        for user, modal in list(self.workspace.modals.items()):
            if modal["id"] == view_id:
                return {"ok": True, "view": self.workspace.open_modal(user, _view(params["view"]))}
        return {"ok": False, "error": "not_found"}

    async def _views_publish(self, params: Json) -> Json:
        view = self.workspace.publish_home(str(params["user_id"]), _view(params["view"]))
        return {"ok": True, "view": view}

    async def _conversations_info(self, params: Json) -> Json:
        return conversations.info(self.workspace, params)

    async def _conversations_open(self, params: Json) -> Json:
        return conversations.open_dm(self.workspace, params)

    @property
    def views(self) -> list[Json]:
        """Every view opened or published, as the tests of the fake once read them."""
        return [c.params for c in self.calls if c.method in ("views.open", "views.publish")]


# Slack takes at most four suggested prompts per thread.
_MAX_PROMPTS = 4


def _invalid() -> Json:
    return {"ok": False, "error": "invalid_arguments"}


def _refused(status: int, error: str) -> web.Response:
    return web.json_response({"ok": False, "error": error}, status=status)


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _view(raw: Any) -> Json:
    return json.loads(raw) if isinstance(raw, str) else dict(raw)


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
