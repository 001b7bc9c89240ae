"""Mounts Slack on the app: ``POST /slack/events`` (or Socket Mode), the OAuth pages; never handles a message itself.

Events, interactivity and slash commands go through bolt, whose listeners hand the work to the
core. The bolt app is built when the server starts (it needs the shared HTTP session and, with
OAuth, its installation tables). A card settled without a press is shown through a Slack
adapter holding the client of the workspace it was posted in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

import aiohttp
import structlog
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot import identity, presses, turns
from bot.adapter import Adapter
from bot.cards import card as cards
from bot.cards.card import Card
from bot.placement import Placement, Platform, SlackPlacement
from bot.presses.decisions import show
from bot.runtime import receipts
from bot.runtime.inbox import Kept
from bot.services import Services
from bot.settings import Settings, SlackMode
from bot.slack import texts
from bot.slack.actions import decide
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.app import Bolt, build_bolt
from bot.slack.events import kept_turn, queue
from bot.slack.home import refresh_homes
from bot.slack.inbound import bolt_request, signable
from bot.slack.install import keep_invite
from bot.slack.pressed import answered_after, kept_press
from bot.slack.resumed import finish_cards
from tools import CardRecord

__all__ = ["SlackRoutes"]

log = structlog.get_logger("bot.slack.routes")


class SlackRoutes:
    """Slack on the shared app: its routes, its bolt app once started, and its Socket Mode link."""

    def __init__(self, settings: Settings, services: Services) -> None:
        self.settings, self.services = settings, services
        self.bolt: Bolt | None = None
        self.session: aiohttp.ClientSession | None = None
        self._socket: AsyncSocketModeHandler | None = None

    @property
    def platform(self) -> Platform:
        return Platform.SLACK

    @classmethod
    def mount(cls, web_app: web.Application, settings: Settings, services: Services) -> SlackRoutes:
        """Adds Slack's routes for this configuration (none for Socket Mode but OAuth's)."""
        routes = cls(settings, services)
        if settings.slack_mode is not SlackMode.SOCKET:
            web_app.router.add_post("/slack/events", routes._events)
        if settings.slack_mode is SlackMode.OAUTH:
            web_app.router.add_get("/slack/install", routes._install)
            web_app.router.add_get("/slack/oauth_redirect", routes._redirect)
        return routes

    @property
    def ready(self) -> Bolt:
        assert self.bolt is not None, "the web application has not started"
        return self.bolt

    async def start(self, session: aiohttp.ClientSession) -> None:
        self.session = session
        self.bolt = await build_bolt(self.settings, self.services, session)
        token = self.settings.slack_app_token
        if self.settings.slack_mode is SlackMode.SOCKET and token is not None:
            self._socket = AsyncSocketModeHandler(self.bolt.app, token.get_secret_value())
            await self._socket.connect_async()  # type: ignore[no-untyped-call]
        log.info("slack_started", mode=str(self.settings.slack_mode))

    async def stop(self) -> None:
        if self._socket is not None:
            await self._socket.close_async()  # type: ignore[no-untyped-call]
        log.info("slack_stopped")

    async def show_settled(self, card: Card, placement: Placement) -> None:
        await self.with_adapter(placement, lambda adapter: show(self.services, adapter, card))

    async def cards_changed(self, record: CardRecord) -> None:
        """Republishes the App Home of everyone the card concerns in its workspace.

        Its issuees and its asker, those with a Slack identity where the card was posted:
        without this an expired or escalated card stayed in open Home tabs as it was.
        """
        card = await cards.of_record(self.services.registry, record)  # an item: its batch's
        placement = next((p for p in card.placements if isinstance(p, SlackPlacement)), None)
        if placement is None:
            return
        client = await self._client_for(placement.team)
        if client is None:
            log.warning("homes_no_installation", team=placement.team, card_id=record.card_id)
            return
        await refresh_homes(self.services, client, record, placement.team)

    async def with_adapter(
        self, placement: Placement, work: Callable[[Adapter], Awaitable[None]]
    ) -> bool:
        """Runs ``work`` with an adapter bound to the copy's workspace and channel; False when
        this process has no installation for that workspace any more."""
        assert isinstance(placement, SlackPlacement)
        client = await self._client_for(placement.team)
        if client is None:
            log.warning("copy_no_installation", team=placement.team)
            return False
        where = Where(placement.team, placement.user or "", channel=placement.channel)
        await work(SlackAdapter(client, where, audit_channel=self.services.audit_channel))
        return True

    async def with_installation(
        self,
        installation: str,
        work: Callable[[Adapter], Awaitable[None]],
        *,
        user: str | None = None,
    ) -> bool:
        """Runs ``work`` with an adapter for a workspace, outside any request and channel (a
        card born elsewhere goes to DMs): with ``user``, speaking in that person's DM with the
        app. False without an installation."""
        client = await self._client_for(installation)
        if client is None:
            log.warning("reach_no_installation", team=installation)
            return False
        where = Where(installation, user or "")
        await work(SlackAdapter(client, where, audit_channel=self.services.audit_channel))
        return True

    async def resume(self, kept: Kept) -> None:
        """Answers a message a gone process acknowledged and never answered: from the start
        when no turn had claimed it, by finishing the cards its turn proposed, else by telling
        the person it was lost (``bot.runtime.inbox``)."""
        client = await self._client_for(kept.installation)
        if client is None:
            # The workspace is gone (uninstalled): nobody can answer it, now or later.
            await self.services.inbox.answered(kept.key, last=True)
            log.warning("resume_no_installation", team=kept.installation)
            return
        pressed = kept_press(kept.message)
        if pressed is not None:
            self._decide_again(client, kept, *pressed)
            return
        where, turn = kept_turn(kept.message)
        adapter = SlackAdapter(client, where, audit_channel=self.services.audit_channel)
        # A delivery already claimed was another event's turn (a mention in the bot's thread
        # arrives as message.channels too, unkept): answered again, this one was a duplicate
        # and its row stayed unanswered, taken anew by every process that started.
        if kept.cards:
            # Killed (or cut off by the database) while its cards went out: each is finished
            # (recorded, posted, its copies sent), and the person told to ask again for one
            # nobody can press any more. Its cards were recorded by the turn that claimed it,
            # so it is never answered from the start: that made a second card for one mention.
            if not await finish_cards(self.services, adapter, turn, kept.cards):
                await adapter.post(texts.message_lost())
            await self.services.inbox.answered(kept.key, last=True)
            log.info("message_cards_finished", key=kept.key, cards=len(kept.cards))
            return
        claimed = kept.started or await receipts.taken(self.services.db, kept.key)
        if claimed and await _replied(client, where):
            # Answered, killed before the answer was marked: telling it lost answered it twice.
            await self.services.inbox.answered(kept.key, last=True)
            log.info("message_found_answered", key=kept.key)
            return
        if claimed:
            await adapter.post(texts.message_lost())
            await self.services.inbox.answered(kept.key, last=True)
            log.info("message_lost_told", key=kept.key)
            return
        turn = replace(turn, kept=kept.key)
        typing = turns.Typing(adapter)
        work = turns.answer(self.services, adapter, turn, typing=typing)
        queue(self.services, turn, typing, work=work, show=typing.on, name=f"resume {where.ts}")
        log.info("message_resumed", key=kept.key)

    def _decide_again(
        self, client: AsyncWebClient, kept: Kept, where: Where, press: presses.Press
    ) -> None:
        """Decides a press a gone process acknowledged and never decided (``bot.slack.pressed``)."""
        adapter = SlackAdapter(client, where, audit_channel=self.services.audit_channel)
        presser = identity.Once(
            self.services.directory,
            adapter,
            press.installation,
            press.user,
            user_team=press.user_team,
        )
        work = answered_after(
            self.services, kept.key, lambda: decide(self.services, adapter, press, presser)
        )
        self.services.tasks.press(work, name=f"{press.verb} again by {press.user}")
        log.info("press_resumed", key=kept.key)

    async def _events(self, request: web.Request) -> web.Response:
        if not signable(request.headers):
            log.warning("slack_request_unsigned", why="timestamp")
            return web.json_response({"ok": False, "error": "invalid_timestamp"}, status=401)
        inbound = await bolt_request(request)
        if inbound is None:
            # Without this a body that is not Slack's shape answers 500 from inside bolt.
            log.warning("slack_request_malformed", content_type=request.content_type)
            return web.json_response({"ok": False, "error": "malformed_request"}, status=400)
        return await to_aiohttp_response(await self.ready.app.async_dispatch(inbound))

    async def _install(self, request: web.Request) -> web.Response:
        flow = self.ready.app.oauth_flow
        if flow is None:
            raise web.HTTPNotFound
        response = await to_aiohttp_response(
            await flow.handle_installation(await to_bolt_request(request))
        )
        keep_invite(request, response)
        return response

    async def _redirect(self, request: web.Request) -> web.Response:
        flow = self.ready.app.oauth_flow
        if flow is None:
            raise web.HTTPNotFound
        return await to_aiohttp_response(await flow.handle_callback(await to_bolt_request(request)))

    async def _client_for(self, team: str) -> AsyncWebClient | None:
        """The app's client, or with OAuth a client holding that workspace's bot token."""
        bolt = self.ready
        if bolt.installations is None:
            return bolt.client
        org = team.startswith("E")
        bot = await bolt.installations.async_find_bot(
            enterprise_id=team if org else None,
            team_id=None if org else team,
            is_enterprise_install=org,
        )
        if bot is None:
            return None
        return AsyncWebClient(
            token=bot.bot_token,
            base_url=bolt.client.base_url,
            session=self.session,
            retry_handlers=bolt.client.retry_handlers,
        )


async def _replied(client: AsyncWebClient, where: Where) -> bool:
    """Whether this app answered the message: in its thread (or its DM), a message of the
    app's own that came after it and before the person's next one.

    Not any bot's message after it: in a DM the answer to the person's later message, or
    another app's post in a thread, would mark a message cut off mid-turn answered, and its
    person would never be told it was lost.
    """
    assert where.channel is not None
    assert where.ts is not None
    try:
        me = await client.auth_test()
        if where.thread_ts:
            page = await client.conversations_replies(
                channel=where.channel, ts=where.thread_ts, oldest=where.ts, limit=100
            )
        else:
            page = await client.conversations_history(
                channel=where.channel, oldest=where.ts, limit=100
            )
    except SlackApiError:
        return False  # not known: told it was lost, as before
    ours = {me.get("bot_id"), me.get("user_id")} - {None}
    later = sorted(
        (m for m in page.get("messages") or [] if float(m["ts"]) > float(where.ts)),
        key=lambda m: float(m["ts"]),
    )
    for said in later:
        if said.get("bot_id") in ours or (not said.get("bot_id") and said.get("user") in ours):
            return True
        if said.get("user") == where.user and not said.get("bot_id"):
            return False  # the person spoke again, unanswered: the app never answered this one
    return False
