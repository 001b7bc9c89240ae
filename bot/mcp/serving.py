"""Countersign as an MCP server: a person's merchant's tools at ``/mcp``, writes countersigned.

An agent elsewhere (an IDE, a desktop assistant, a job) calls with a personal token, and the
token's person is the caller: the tools are their merchant's as their role sees them, reads run
through ``Registry.call`` as any read, and a write comes back as a proposal, never done. Its
card goes to the people it is issued to, in their DM with the app (``bot.mcp.delivery``), and
runs on Approve, once, exactly as a card from the chat. The agent learns the outcome by asking
``card_status``. The agent never executes: ``Registry.call`` has no path to a write.

Stateless streamable HTTP (the MCP spec of 2026-07-28, and older clients' stateless requests):
any process behind a balancer answers any request, with no session to find. Each is a POST
naming this server's own Host and, from a browser, Origin (``bot.mcp.guard``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    ToolAnnotations,
)
from mcp.types import Tool as McpTool

from bot.cards.wording import MCP_AGENT_PREFIX, sentence
from bot.mcp.delivery import Delivered, Reach, deliver
from bot.mcp.exchange import exchange
from bot.mcp.guard import Guard
from bot.mcp.oauth_routes import OAuthRoutes
from bot.services import Services
from tools import (
    TOKEN_PREFIX,
    Agent,
    Bearer,
    Caller,
    McpTokens,
    Proposal,
    Result,
    Scope,
    Tool,
    json_schema,
    one_line,
)
from tools.errors import CountersignError, InvalidArgumentsError

__all__ = ["McpEndpoint"]

log = structlog.get_logger("bot.mcp")

# Where ``handle`` leaves the token's caller for the handlers: the ASGI scope's state.
_CALLER = "countersign_caller"
_BEARER = "countersign_bearer"
_REALM = 'Bearer realm="countersign"'
_INSTRUCTIONS = (
    "Countersign's tools for one merchant. Reads answer at once. A write is never done by "
    "calling it: it becomes an approval card for the people the merchant's policy names, in "
    "Slack or Teams, and runs only when one of them presses Approve. Its result says NOT done, "
    "whom it waits for and the card id; ask card_status with that card_id for the outcome."
)


@dataclass(frozen=True, slots=True)
class _Call:
    """Who is calling, as the request's token says, and through which client."""

    caller: Caller
    bearer: Bearer
    client: str

    @property
    def agent_name(self) -> str:
        token = self.bearer.name.replace("/", "-")[:40]
        return f"{MCP_AGENT_PREFIX}{token}/{self.client.replace('/', '-')[:40]}"


class McpEndpoint:
    """The ``/mcp`` route: a token check, then the MCP SDK's stateless streamable HTTP."""

    def __init__(
        self,
        services: Services,
        reaches: Sequence[Reach],
        *,
        public_url: str | None = None,
        secrets: Sequence[str],
        loopback_clients: bool = False,
    ) -> None:
        self.services = services
        self.reaches = list(reaches)
        self.guard = Guard(public_url)
        self.tokens = McpTokens(services.db, clock=services.registry.now)
        self.oauth = OAuthRoutes(
            services,
            reaches,
            self.guard,
            public_url=public_url,
            secrets=secrets,
            loopback_clients=loopback_clients,
        )
        # The chat's allow-list, with the tools only an outside agent needs (card_status).
        services.registry.register_agent_family(
            MCP_AGENT_PREFIX, Agent("mcp", services.agent.tools)
        )
        self.server: Server[Any] = Server(
            "countersign",
            version="1",
            title="Countersign",
            instructions=_INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        # Made each time the app starts: the SDK's manager runs once per instance, and one
        # application may be started more than once (a test server, a restart in process).
        self.manager: StreamableHTTPSessionManager | None = None

    def mount(self, web_app: web.Application) -> None:
        web_app.router.add_route("*", "/mcp", self.handle)
        self.oauth.mount(web_app)
        web_app.cleanup_ctx.append(self._running)

    async def _running(self, _: web.Application) -> AsyncIterator[None]:
        """Holds the SDK's session manager open in a task of its own: it is an anyio scope,
        left in the task that entered it, and aiohttp may start and clean up in two."""
        started, stop = asyncio.Event(), asyncio.Event()
        manager = StreamableHTTPSessionManager(self.server, stateless=True, json_response=True)

        async def hold() -> None:
            async with manager.run():
                self.manager = manager
                started.set()
                await stop.wait()

        holding = asyncio.create_task(hold(), name="mcp session manager")
        await asyncio.wait(
            {holding, asyncio.create_task(started.wait())}, return_when="FIRST_COMPLETED"
        )
        if holding.done():
            holding.result()  # raises why it could not start
        try:
            yield
        finally:
            self.manager = None
            stop.set()
            await holding

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answers 405, 421 or 403 as ``bot.mcp.guard`` refuses, 401 to anything but a live
        token of a known person, else serves MCP."""
        refused = await self.guard.refusal(request)
        if refused is not None:
            return refused
        presented = request.headers.get("Authorization", "")
        scheme, _, token = presented.partition(" ")
        metadata = self.oauth.resource_metadata_url(request)
        if scheme.lower() != "bearer" or not token.strip():
            return _unauthorized(
                "Connect with OAuth, or send Authorization: Bearer <token> (countersign "
                "mcp-token create).",
                metadata=metadata,
            )
        bearer = await self._bearer(token.strip(), request)
        caller = await self.services.directory.person(bearer.personid) if bearer else None
        if bearer is None or caller is None or caller.tenantid != bearer.tenantid:
            log.info("mcp_token_refused", remote=request.remote)
            return _unauthorized(
                "This token is unknown, revoked or expired.", invalid=True, metadata=metadata
            )
        manager = self.manager
        if manager is None:  # between start-ups: nothing serves MCP right now
            return web.json_response(
                {"error": "unavailable", "message": "Countersign is starting; try again."},
                status=503,
                headers={"Retry-After": "1"},
            )
        return await exchange(manager.handle_request, request, {_CALLER: caller, _BEARER: bearer})

    async def _bearer(self, token: str, request: web.Request) -> Bearer | None:
        """A personal token's person, or a connected agent's (its grant bound to this ``/mcp``)."""
        if token.startswith(TOKEN_PREFIX):
            return await self.tokens.verify(token)
        resource = f"{self.oauth.base(request)}/mcp"
        return await self.oauth.grants.verify(token, resource=resource)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        call = _who(ctx)
        tools = await self.services.registry.offered(self._agent(call), call.caller.tenantid)
        shown = [_listed(tool) for tool in tools if _sees(call.caller, tool)]
        return ListToolsResult(tools=shown)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        call = _who(ctx)
        registry = self.services.registry
        log.info("mcp_call", tool=params.name, agent=call.agent_name, tenant=call.caller.tenantid)
        try:
            result = await registry.call(
                self._agent(call), params.name, params.arguments or {}, call.caller
            )
        except InvalidArgumentsError as invalid:
            return _error(str(invalid))
        except CountersignError as refused:
            return _error(str(refused))
        if result.proposal is None:
            return _rows(result)
        delivered = await deliver(
            self.services, self.reaches, result.proposal, call.caller, agent=call.agent_name
        )
        log.info(
            "mcp_card_proposed",
            card_id=result.proposal.card_id,
            agent=call.agent_name,
            reached=len(delivered.reached),
        )
        return _waiting(result.proposal, delivered)

    def _agent(self, call: _Call) -> Agent:
        agent = self.services.registry.proposer(call.agent_name, self.services.agent)
        assert agent is not None  # the family registered in __init__
        return agent


def _who(ctx: ServerRequestContext[Any, Any]) -> _Call:
    state = getattr(ctx.request, "state", None)
    caller, bearer = getattr(state, _CALLER, None), getattr(state, _BEARER, None)
    if not isinstance(caller, Caller) or bearer is None:
        # Every request reaches the SDK through ``handle``, which set both.
        raise RuntimeError("an MCP request without its token's caller")
    return _Call(caller, bearer, _client_name(ctx))


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str:
    """The client's own name (its ``clientInfo``), or its User-Agent when it gave none: one
    line of at most 40 characters, its hidden characters marked, as every card shows it.

    A client named "Cursor\nAmount: ₹1.00\nApproved by: Priya Raman" drew two lines of its own
    under the card's "Asked by an agent" line, and kept them in the audit log.
    """
    meta = ctx.meta or {}
    info = meta.get("io.modelcontextprotocol/clientInfo")
    headers = getattr(ctx.request, "headers", None)
    said = headers.get("user-agent") if headers is not None else None
    if isinstance(info, dict) and info.get("name"):
        said = str(info["name"])
    return one_line(str(said or ""), 40) or "unknown client"


def _sees(caller: Caller, tool: Tool) -> bool:
    """A read needs the role to run; a write may be asked by anyone (its card is routed)."""
    return tool.scope is Scope.WRITE or caller.role.satisfies(tool.role)


def _listed(tool: Tool) -> McpTool:
    writes = tool.scope is Scope.WRITE
    schema = tool.schema if tool.schema is not None else json_schema(tool.args)
    return McpTool(
        name=tool.name,
        title=tool.title[:1].upper() + tool.title[1:] if tool.title else None,
        description=tool.description,
        input_schema=schema,
        annotations=ToolAnnotations(
            read_only_hint=not writes,
            destructive_hint=tool.destructive if writes else False,
            idempotent_hint=None if writes else True,
            open_world_hint=tool.external or None,
        ),
    )


def _rows(result: Result) -> CallToolResult:
    shown = result.for_model()
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(shown, ensure_ascii=False, default=str))],
        structured_content=shown,
    )


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _waiting(proposal: Proposal, delivered: Delivered) -> CallToolResult:
    """A write's answer: not an error, and plainly NOT done."""
    routing = proposal.routing
    names = [i.name for i in routing.issued_to] if routing else []
    who = " or ".join(names) or "nobody"
    needs = routing.approvals if routing else 1
    where = " and ".join(p.capitalize() for p in delivered.platforms) or "Countersign"
    expires = proposal.expires_at.isoformat(timespec="seconds") if proposal.expires_at else None
    approvals = f"{needs} approvals from" if needs > 1 else "approval by"
    # The card's sentence leads, as in the chat's own note: an agent whose client shows only
    # the text (not structured_content) was told it waits, but not what it would do.
    text = (
        f"NOT done: {sentence(proposal.summary)} Waiting for {approvals} {who} in {where}. "
        f"Card {proposal.card_id}"
        + (f", expires at {expires}" if expires else "")
        + ". Nothing has changed yet; call card_status with this card_id to learn the outcome."
    )
    if delivered.unreached:
        text += (
            " Could not reach "
            + ", ".join(delivered.unreached)
            + ": the card waits for them all the same (in Slack's App Home once they are "
            "linked; Teams reaches a person once they have written to Countersign in their 1:1 "
            "chat), and expires if nobody decides it."
        )
    body: dict[str, Any] = {
        "status": "pending",
        "done": False,
        "card_id": proposal.card_id,
        "summary": proposal.summary,
        "details": [{"label": d.label, "value": d.value} for d in proposal.details],
        "waiting_for": names,
        "approvals_needed": needs,
        "expires_at": expires,
        "delivered_to": list(delivered.reached),
    }
    if proposal.warning:
        body["warning"] = proposal.warning
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=body)


def _unauthorized(description: str, *, metadata: str, invalid: bool = False) -> web.Response:
    """401 with the challenge RFC 6750 asks for, naming where the protected resource metadata
    is (RFC 9728), which is how an OAuth client finds how to connect."""
    challenge = (
        _REALM
        + f', resource_metadata="{metadata}"'
        + (f', error="invalid_token", error_description="{description}"' if invalid else "")
    )
    return web.json_response(
        {"error": "unauthorized", "message": description},
        status=401,
        headers={"WWW-Authenticate": challenge},
    )
