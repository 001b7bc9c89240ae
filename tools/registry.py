"""Runs tool calls: a read runs its handler, a write only ever proposes; never performs a write.

``Registry.call`` is the model's only door. It checks, in order, that the tool exists, that the
agent may use it, that the caller's role is enough and that the arguments fit the schema; then a
read runs and a write resolves into a card (``tools.approving.approval``). Every call is audited, the
refusals too: a proposal in the transaction that stores its card, everything else on its own.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from tools import schema
from tools.agent import Agent
from tools.approving import approval, decline
from tools.audit.log import AuditEntry, Outcome
from tools.caller import Caller
from tools.cards.lease import ProcessLease
from tools.cards.record import CardRecord
from tools.cards.tokens import CardSigner, Clock, is_batch_token, utcnow
from tools.catalogue import Catalogue, ToolSource
from tools.db import Database
from tools.deps import EngineDeps, TenantNames
from tools.errors import (
    CardExpiredError,
    CountersignError,
    InvalidCardError,
    NotAllowedError,
    RoleRequiredError,
    UnknownToolError,
)
from tools.keeping.door import Batches, PostingChange, Showing, Sweeps
from tools.people.policy import Policies, Policy
from tools.proposing import editing
from tools.proposing import write as proposing
from tools.tool import Result, Scope, Tool, refuse_plain_call

__all__ = ["ALL_TOOLS", "Registry"]

# The agent that may use every tool of a merchant's catalogue: the chat's own. Its model is not
# offered card_status: a chat reads what became of its cards in the conversation (and asks
# my_cards), and the tool's definition would cost every request tokens for nothing; an agent
# elsewhere (``/mcp``), which learns outcomes no other way, has it.
ALL_TOOLS = Agent("countersign", excluded=frozenset({"card_status"}))


class Registry:
    """The bot's one door to the engine: the model's calls, a person's decisions, the cards.

    Its public surface is what the bot asks, and no more: setting up the catalogue, proposing
    (``call``), deciding (``approve``, ``reject``, ``withdraw``, ``edit``), reading cards, and
    three small doors, ``batches``, ``showing`` and ``sweeps`` (``tools.keeping.door``). The
    database, signer, clock, lease, card store and audit log it is built with stay inside: the
    bot keeps its own rows through the database and lease it built this registry with, never
    through the registry. It builds one ``EngineDeps`` and hands it to every step of a card's
    life (``tools.deps``); none of those steps sees the registry.

    ``agents`` are the agents whose cards this registry may approve beyond the one a surface
    presents (see ``proposer``); ``lease`` names this process on the cards it claims.
    """

    def __init__(
        self,
        db: Database,
        signer: CardSigner,
        tools: Iterable[Tool] = (),
        *,
        clock: Clock = utcnow,
        tenant_names: Callable[[AsyncSession, int], Awaitable[str]] | None = None,
        agents: Iterable[Agent] = (),
        lease: ProcessLease | None = None,
        sources: Iterable[ToolSource] = (),
        default_agent: Agent = ALL_TOOLS,
    ) -> None:
        self._catalogue = Catalogue(sources=list(sources))
        self._agents: dict[str, Agent] = {}
        self.default_agent = default_agent
        self._deps = EngineDeps(
            db,
            signer,
            clock=clock,
            lease=lease or ProcessLease(db, clock=clock),
            catalogue=self._catalogue,
            agents=self._agents,
            names=TenantNames(tenant_names, clock=clock),
        )
        self._batches = Batches(self._deps)
        self._showing = Showing(self._deps)
        self._sweeps = Sweeps(self._deps)
        for tool in tools:
            self.register(tool)
        for agent in agents:
            self._register_agent(agent)

    @property
    def batches(self) -> Batches:
        """Several cards of one turn behind one Approve."""
        return self._batches

    @property
    def showing(self) -> Showing:
        """Who shows a decision, and the record that it was shown."""
        return self._showing

    @property
    def sweeps(self) -> Sweeps:
        """What moves cards on without a press: settling, expiry, escalation."""
        return self._sweeps

    def register(self, tool: Tool) -> None:
        """Adds a reference tool: one every merchant has."""
        if tool.scope is Scope.READ and tool.handler is refuse_plain_call:
            raise TypeError(f"read tool {tool.name} has no handler")
        self._catalogue.add(tool)

    def add_source(self, source: ToolSource) -> None:
        """Adds tools that differ by merchant (its MCP servers)."""
        self._catalogue.add_source(source)

    async def warm(self) -> None:
        """Starts the merchants' sources (their MCP servers) so that no first turn waits."""
        await self._catalogue.warm()

    async def aclose(self) -> None:
        """Closes what the merchants' sources hold open (stdio servers, HTTP connections)."""
        await self._catalogue.aclose()

    def _register_agent(self, agent: Agent) -> None:
        if agent.name in self._agents:
            raise ValueError(f"agent {agent.name} is registered twice")
        self._agents[agent.name] = agent

    def register_agent_family(self, prefix: str, agent: Agent) -> None:
        """Agents named ``prefix…`` (one per outside caller, named for the audit) have
        ``agent``'s allow-list, here and at approval."""
        self._deps.add_family(prefix, agent)

    def proposer(self, name: str, presented: Agent) -> Agent | None:
        """The agent that proposed a card, by the name stored with it; None when unknown
        (``EngineDeps.proposer``)."""
        return self._deps.proposer(name, presented)

    async def offered(self, agent: Agent, tenantid: int) -> list[Tool]:
        """Every tool of one merchant that ``agent`` may use: the reference ones and its own."""
        tools = await self._catalogue.of(tenantid)
        return [tool for name, tool in tools.items() if agent.allows(name)]

    async def card_tool(self, tenantid: int, name: str) -> Tool | None:
        """The write a card of ``name`` runs with in that merchant's catalogue, or None."""
        return await self._deps.card_tool(tenantid, name)

    async def call(
        self,
        agent: Agent,
        name: str,
        args: Mapping[str, Any],
        caller: Caller,
        *,
        edited: CardRecord | None = None,
    ) -> Result:
        """Runs a read, or turns a write into a proposal with a signed card. Always audited.

        ``edited``: the card this proposal is an edit of (only ``tools.proposing.editing`` passes it).
        """
        started, timer = self._deps.clock(), time.perf_counter()
        entry = AuditEntry(
            at=started,
            agent=agent.name,
            tool=name,
            userid=caller.userid,
            tenantid=caller.tenantid,
            scope="?",
            args=dict(args),
        )
        audited = False  # a proposal is audited in the transaction that stores its card
        try:
            result = await self._call(
                agent, name, args, caller, now=started, entry=entry, timer=timer, edited=edited
            )
        except CountersignError as refused:
            entry.outcome, entry.detail = Outcome.REFUSED, str(refused)
            raise
        except Exception as broken:
            entry.outcome, entry.detail = Outcome.FAILED, f"{type(broken).__name__}: {broken}"
            raise
        else:
            entry.rows, audited = result.count, result.proposal is not None
            # What a read said of its rows (an MCP answer cut short says its full size there).
            entry.detail = result.note
            return result
        finally:
            if not audited:
                entry.took_ms = (time.perf_counter() - timer) * 1000
                await self._deps.audit.write(entry)

    async def _call(
        self,
        agent: Agent,
        name: str,
        args: Mapping[str, Any],
        caller: Caller,
        *,
        now: datetime,
        entry: AuditEntry,
        timer: float,
        edited: CardRecord | None = None,
    ) -> Result:
        tool = await self._find(caller.tenantid, name, edited=edited)
        entry.scope = str(tool.scope)
        # A registered agent's allow-list is the one that counts, here as at approval.
        self._check_access(self._agents.get(agent.name, agent), tool, caller)
        clean = schema.validate(tool.name, tool.args, args)
        entry.args = clean.model_dump(mode="json")
        writes = tool.scope is Scope.WRITE  # a proposal reads, then stores its card
        async with self._deps.db.tenant_session(caller.tenantid, write=writes) as session:
            ctx = await self._deps.context(session, caller, now)
            if tool.scope is Scope.READ:
                return await tool.handler(ctx, clean)
            return await proposing.propose(
                self._deps,
                ctx,
                clean,
                agent=agent,
                tool=tool,
                entry=entry,
                timer=timer,
                edited=edited,
            )

    async def _find(self, tenantid: int, name: str, *, edited: CardRecord | None) -> Tool:
        """The merchant's tool of that name. An edit proposes the card's own write again, even
        if the tool is classified a read now: a card agreed to as a write never runs as a read.
        """
        tool = (
            await self._catalogue.card_tool(tenantid, name)
            if edited is not None
            else self._catalogue.reference.get(name)
            or (await self._catalogue.of(tenantid)).get(name)
        )
        if tool is None:
            raise UnknownToolError(name)
        return tool

    def _check_access(self, agent: Agent, tool: Tool, caller: Caller) -> None:
        """The allow-list, then the role of a read: asked at every call.

        A write's role is not the asker's to have: a staff member may ask, and the card goes
        to the people whose role is enough (``tools.people.routing``); the presser's role is checked
        at approval.
        """
        if not agent.allows(tool.name):
            raise NotAllowedError(agent.name, tool.name, title=tool.title)
        if tool.scope is Scope.READ and not caller.role.satisfies(tool.role):
            raise RoleRequiredError(tool.name, str(tool.role), str(caller.role), title=tool.title)

    async def approve(self, agent: Agent, token: str, caller: Caller) -> approval.Decision:
        """Runs an approved card once; see ``tools.approving.approval.approve``.

        ``agent`` is the presenting surface's agent; the allow-list checked is that of the
        agent that proposed the card (``proposer``).
        """
        return await approval.approve(self._deps, agent, token, caller)

    async def reject(
        self, agent: Agent, token: str, caller: Caller, reason: str = ""
    ) -> approval.Decision:
        """Declines a card; see ``tools.approving.decline.reject``."""
        return await decline.reject(self._deps, agent, token, caller, reason)

    async def edit(
        self, agent: Agent, token: str, caller: Caller, changes: Mapping[str, Any]
    ) -> Result:
        """Proposes a card again with a person's changes, replacing it; see ``tools.proposing.editing``."""
        edit = await editing.prepare(self._deps, agent, token, caller, changes)
        return await self.call(edit.proposer, edit.tool, edit.args, caller, edited=edit.card)

    async def withdraw(self, agent: Agent, token: str, caller: Caller) -> approval.Decision:
        """Takes back a card its asker no longer wants; see ``tools.approving.decline.withdraw``."""
        return await decline.withdraw(self._deps, agent, token, caller)

    # Reading cards: a person's, one by its id or its signed token, and where its copies are.

    def now(self) -> datetime:
        """The engine's time: the time cards are made, decided and swept by."""
        return self._deps.clock()

    async def card(self, card_id: str) -> CardRecord | None:
        """The stored card, as it stands now, or None."""
        return await self._deps.cards.get(card_id)

    async def card_of_token(self, token: str) -> CardRecord | None:
        """The stored card a signed token names, or None when its signature does not hold.

        Found even when its time has run out, so the decision itself refuses it and says so.
        A read: it decides nothing, and the token is verified again by whatever is done with it.
        """
        card_id: str | None
        try:
            card_id = self._deps.signer.parse(token).card_id
        except CardExpiredError as expired:
            card_id = expired.card_id
        except InvalidCardError:
            return None
        return await self._deps.cards.get(card_id) if card_id else None

    def card_id_of(self, token: str) -> str | None:
        """The card (or card of several) a token's signature vouches for, its time run out or
        not; None when the signature does not hold.

        A press names its card by this, never by what a surface drew beside the button: a block
        id or a modal's metadata only helps find where a message is.
        """
        signer = self._deps.signer
        try:
            if is_batch_token(token):
                return signer.parse_batch(token)[0].batch_id
            return signer.parse(token).card_id
        except CardExpiredError as expired:
            return expired.card_id
        except InvalidCardError:
            return None

    async def pending_for(self, caller: Caller) -> list[CardRecord]:
        """The live cards waiting on this person's decision, oldest first."""
        return await self._deps.cards.pending_for(caller.userid, caller.tenantid, self.now())

    async def asked_by(self, caller: Caller) -> list[CardRecord]:
        """The live cards this person asked for that wait on somebody else, oldest first."""
        return await self._deps.cards.asked_by(caller.userid, caller.tenantid, self.now())

    async def change_posting(self, card_id: str, change: PostingChange) -> CardRecord | None:
        """Rewrites where a card's copies are under the row's lock; the card as it then stands."""
        return await self._deps.cards.change_posting(card_id, change)

    async def policy(self, tenantid: int) -> Policy:
        """The merchant's approval policy as stored now."""
        return await Policies(self._deps.db).get(tenantid)
