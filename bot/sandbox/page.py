"""Serves the sandbox's Slack-like web page and its JSON and live-update endpoints; never renders untrusted text as HTML.

``GET /`` and ``/static/*`` are hand-written files (no build step, nothing from the internet).
``GET /ui/state`` is a person's whole view; ``GET /ui/feed`` streams it again and then what
changes for them (Server-Sent Events), already filtered: another person's ephemeral message or modal never
leaves the server. ``POST /ui/*`` are what the person does (``/ui/assistant`` opens the app's
assistant pane on a new thread); ``POST /ui/reset`` starts the demo
afresh (its data and this workspace). ``guard`` keeps other web sites
out of all of it (JSON only, same origin, our own host name); refusals are JSON too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.sandbox.acting import Acting, ActingError
from bot.sandbox.guard import guard
from bot.sandbox.people import demo_workspace
from bot.sandbox.workspace import Change

__all__ = ["ACTING", "AFRESH", "FEEDS", "Afresh", "Feeds", "add_page_routes"]

Json = dict[str, Any]
STATIC = Path(__file__).parent / "static"
_FILES = {"app.js", "assistant.js", "blocks.js", "mrkdwn.js", "rich.js", "style.css"}
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
_RECONNECT_MS = 1000
_KEEPALIVE = 15.0
_NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


class Feeds:
    """The open live-update streams, one queue each, fed from the workspace's changes."""

    def __init__(self) -> None:
        self._queues: dict[asyncio.Queue[Change | None], str] = {}
        self.acting: Acting | None = None

    def listen(self, change: Change) -> None:
        assert self.acting is not None
        for queue, viewer in self._queues.items():
            if self.acting.workspace.may_see(viewer, change):
                queue.put_nowait(change)

    def open(self, viewer: str) -> asyncio.Queue[Change | None]:
        queue: asyncio.Queue[Change | None] = asyncio.Queue()
        self._queues[queue] = viewer
        return queue

    def close(self, queue: asyncio.Queue[Change | None]) -> None:
        self._queues.pop(queue, None)

    def end_all(self) -> None:
        """Ends every stream, so a shutdown does not wait on browsers that stay open."""
        for queue in self._queues:
            queue.put_nowait(None)


Afresh = Callable[[], Awaitable[None]]

ACTING = web.AppKey("sandbox_acting", Acting)
FEEDS = web.AppKey("sandbox_feeds", Feeds)
AFRESH: web.AppKey[Afresh] = web.AppKey("sandbox_afresh")


def add_page_routes(
    app: web.Application, acting: Acting, *, host: str = "127.0.0.1", afresh: Afresh | None = None
) -> None:
    """Serves the page from ``app`` and guards everything ``app`` serves (the Web API too).

    ``host`` is where the page listens (``COUNTERSIGN_HOST``): the one name besides loopback's
    that requests may address. ``afresh`` starts the demo afresh (the page's button); without
    it, only the workspace does.
    """
    app.middlewares.append(guard(host))
    feeds = Feeds()
    feeds.acting = acting
    acting.workspace.listeners.append(feeds.listen)
    app[ACTING], app[FEEDS] = acting, feeds
    app[AFRESH] = afresh or (lambda: _workspace_afresh(acting))
    app.router.add_get("/", _index)
    app.router.add_get("/static/{name}", _static)
    app.router.add_get("/ui/state", _state)
    app.router.add_get("/ui/feed", _feed)
    app.router.add_post("/ui/say", _say)
    app.router.add_post("/ui/press", _press)
    app.router.add_post("/ui/submit", _submit)
    app.router.add_post("/ui/close", _close)
    app.router.add_post("/ui/home", _home)
    app.router.add_post("/ui/assistant", _assistant)
    app.router.add_post("/ui/reset", _reset)
    app.on_shutdown.append(_end_feeds)


async def _end_feeds(app: web.Application) -> None:
    app[FEEDS].end_all()


async def _index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html", headers=_NO_STORE)


async def _static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in _FILES:
        raise web.HTTPNotFound
    body = (STATIC / name).read_text(encoding="utf-8")
    kind = _TYPES[Path(name).suffix]
    return web.Response(text=body, content_type=kind, headers=_NO_STORE)


def _viewer(request: web.Request, given: Any) -> str:
    workspace = request.app[ACTING].workspace
    user = workspace.users.get(str(given or ""))
    if user is None or user.is_bot:
        raise _refused(web.HTTPBadRequest, "unknown person")
    return user.id


async def _body(request: web.Request) -> Json:
    if request.content_type != "application/json":
        raise _refused(web.HTTPUnsupportedMediaType, "Send JSON (Content-Type: application/json).")
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise _refused(web.HTTPBadRequest, "Send a JSON object.") from None
    if not isinstance(body, dict):
        raise _refused(web.HTTPBadRequest, "Send a JSON object.")
    return body


def _refused(kind: type[web.HTTPError], error: str) -> web.HTTPError:
    return kind(text=json.dumps({"ok": False, "error": error}), content_type="application/json")


async def _state(request: web.Request) -> web.Response:
    viewer = _viewer(request, request.query.get("as"))
    return web.json_response(request.app[ACTING].workspace.snapshot(viewer), headers=_NO_STORE)


async def _feed(request: web.Request) -> web.StreamResponse:
    viewer = _viewer(request, request.query.get("as"))
    feeds = request.app[FEEDS]
    stream = web.StreamResponse(headers={"Content-Type": "text/event-stream", **_NO_STORE})
    await stream.prepare(request)
    # The stream opens with the whole view, taken as its queue starts listening (no await in
    # between): a change made after the page read ``/ui/state`` but before this stream
    # connected is in the one or the other, never lost. A reconnect gets the same.
    queue = feeds.open(viewer)
    whole = json.dumps(request.app[ACTING].workspace.snapshot(viewer), separators=(",", ":"))
    try:
        # ``retry``: once the bot is back, the page reconnects within a second, not the
        # browser's default of about three (a restarted `make run` looked slow to come back).
        await stream.write(f"retry: {_RECONNECT_MS}\nevent: state\ndata: {whole}\n\n".encode())
        while True:
            try:
                change = await asyncio.wait_for(queue.get(), _KEEPALIVE)
            except TimeoutError:
                await stream.write(b": keepalive\n\n")
                continue
            if change is None:
                break
            data = json.dumps(change.data, separators=(",", ":"))
            await stream.write(f"event: {change.kind}\ndata: {data}\n\n".encode())
    except ConnectionResetError:
        pass  # the browser went away; its stream simply ends
    finally:
        feeds.close(queue)
    return stream


def _acted(work: Any) -> Any:
    try:
        return work()
    except ActingError as refused:
        raise _refused(web.HTTPBadRequest, str(refused)) from None


async def _say(request: web.Request) -> web.Response:
    body = await _body(request)
    viewer = _viewer(request, body.get("as"))
    acting = request.app[ACTING]
    message = _acted(
        lambda: acting.say(
            viewer,
            str(body.get("channel", "")),
            str(body.get("text", "")),
            body.get("thread_ts") or None,
        )
    )
    return web.json_response({"ok": True, "ts": message.ts if message else None})


async def _press(request: web.Request) -> web.Response:
    body = await _body(request)
    viewer = _viewer(request, body.get("as"))
    acting = request.app[ACTING]
    try:
        outcome = await acting.press(
            viewer,
            action_id=str(body.get("action_id", "")),
            block_id=str(body.get("block_id", "")),
            channel=body.get("channel") or None,
            ts=body.get("ts") or None,
            value=str(body["value"]) if body.get("value") is not None else None,
        )
    except ActingError as refused:
        raise _refused(web.HTTPBadRequest, str(refused)) from None
    return web.json_response({"ok": outcome.ok, "status": outcome.status})


async def _submit(request: web.Request) -> web.Response:
    body = await _body(request)
    viewer = _viewer(request, body.get("as"))
    given = body.get("values")
    values: Json = given if isinstance(given, dict) else {}
    try:
        outcome = await request.app[ACTING].submit(viewer, values)
    except ActingError as refused:
        raise _refused(web.HTTPBadRequest, str(refused)) from None
    answer = outcome.json() or {}
    return web.json_response(
        {
            "ok": outcome.ok,
            "status": outcome.status,
            "errors": answer.get("errors") if answer.get("response_action") == "errors" else None,
        }
    )


async def _close(request: web.Request) -> web.Response:
    body = await _body(request)
    viewer = _viewer(request, body.get("as"))
    _acted(lambda: request.app[ACTING].close(viewer))
    return web.json_response({"ok": True})


async def _home(request: web.Request) -> web.Response:
    body = await _body(request)
    viewer = _viewer(request, body.get("as"))
    _acted(lambda: request.app[ACTING].open_home(viewer))
    return web.json_response({"ok": True})


async def _assistant(request: web.Request) -> web.Response:
    """Opening the assistant pane on a new thread; ``context`` is the channel being looked at.
    With the open thread's ``thread_ts``, the person moved to the ``context`` channel."""
    body = await _body(request)
    viewer = _viewer(request, body.get("as"))
    context = str(body.get("context") or "") or None
    acting, open_thread = request.app[ACTING], str(body.get("thread_ts") or "")
    thread = _acted(
        lambda: (
            acting.change_context(viewer, open_thread, context or "")
            if open_thread
            else acting.start_thread(viewer, context)
        )
    )
    return web.json_response({"ok": True, "thread": thread})


async def _workspace_afresh(acting: Acting) -> None:
    acting.workspace.start_afresh(demo_workspace())


async def _reset(request: web.Request) -> web.Response:
    body = await _body(request)
    _viewer(request, body.get("as"))
    await request.app[AFRESH]()
    return web.json_response({"ok": True})
