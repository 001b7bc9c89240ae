"""What the engine's steps share: the database, the signer, cards, audit, clock, lease, tools.

Every step of a card's life (``tools.proposing.write``, ``tools.approving.approval``, ``tools.approving.decline``,
``tools.proposing.editing``, ``tools.batches.grouping``, ``tools.keeping.showing``, ``tools.keeping.reconcile``) takes a ``Deps``
and nothing wider: none of them sees ``Registry``, which sits above them and builds one
``EngineDeps`` for all of them. Never runs a tool or decides a card itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from tools.agent import Agent
from tools.audit.log import AuditLog
from tools.caller import Caller
from tools.cards.lease import ProcessLease
from tools.cards.store import CardStore
from tools.cards.tokens import CardSigner, Clock
from tools.catalogue import Catalogue
from tools.db import Database
from tools.tool import Tool, ToolContext

__all__ = ["Deps", "EngineDeps", "TenantNames"]

_NAME_TTL = timedelta(seconds=60)  # how long a merchant's name is reused for scope lines

TenantNameFn = Callable[[AsyncSession, int], Awaitable[str]]


class Deps(Protocol):
    """What a step of a card's life may use; the whole of it."""

    @property
    def db(self) -> Database: ...

    @property
    def signer(self) -> CardSigner: ...

    @property
    def cards(self) -> CardStore: ...

    @property
    def audit(self) -> AuditLog: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def lease(self) -> ProcessLease: ...

    @property
    def card_ttl(self) -> timedelta: ...

    async def card_tool(self, tenantid: int, name: str) -> Tool | None:
        """The write a card of ``name`` runs with in that merchant's catalogue, or None."""

    def external(self, tenantid: int, name: str) -> bool:
        """Whether a card of ``name`` writes outside the database (``Tool.external``)."""

    def proposer(self, name: str, presented: Agent) -> Agent | None:
        """The agent that proposed a card, by the name stored with it; None when unknown."""

    async def context(
        self,
        session: AsyncSession,
        caller: Caller,
        now: datetime,
        card_id: str | None = None,
        *,
        approved_by: str | None = None,
    ) -> ToolContext:
        """What a tool's handler, ``propose`` or ``execute`` runs with, in ``session``."""


class TenantNames:
    """The merchant's name for scope lines, read at most once a minute per tenant.

    It was a query in every tool transaction, the proposal's and the write's included, for a
    name that changes perhaps once in a merchant's life; a rename shows within ``_NAME_TTL``
    here and at once after a restart. The minute is the registry's clock's, so a test can let
    it run out.
    """

    def __init__(self, read: TenantNameFn | None, *, clock: Clock) -> None:
        self._read, self._clock = read, clock
        self._names: dict[int, tuple[str, datetime]] = {}

    async def get(self, session: AsyncSession, tenantid: int) -> str:
        if self._read is None:
            return ""
        cached = self._names.get(tenantid)
        at = self._clock()
        if cached is not None and timedelta(0) <= at - cached[1] < _NAME_TTL:
            return cached[0]
        name = await self._read(session, tenantid)
        self._names[tenantid] = (name, at)
        return name


class EngineDeps:
    """The one ``Deps`` a registry builds: its catalogue and agents are the registry's own, live."""

    def __init__(
        self,
        db: Database,
        signer: CardSigner,
        *,
        clock: Clock,
        lease: ProcessLease,
        catalogue: Catalogue,
        agents: Mapping[str, Agent],
        names: TenantNames,
    ) -> None:
        self._db, self._signer, self._clock, self._lease = db, signer, clock, lease
        self._audit, self._cards = AuditLog(db), CardStore(db)
        self._catalogue, self._agents, self._names = catalogue, agents, names
        self._families: dict[str, Agent] = {}

    def add_family(self, prefix: str, agent: Agent) -> None:
        """Agents whose names start with ``prefix`` have ``agent``'s allow-list."""
        self._families[prefix] = agent

    @property
    def db(self) -> Database:
        return self._db

    @property
    def signer(self) -> CardSigner:
        return self._signer

    @property
    def cards(self) -> CardStore:
        return self._cards

    @property
    def audit(self) -> AuditLog:
        return self._audit

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def lease(self) -> ProcessLease:
        return self._lease

    @property
    def card_ttl(self) -> timedelta:
        return self._signer.ttl

    async def card_tool(self, tenantid: int, name: str) -> Tool | None:
        return await self._catalogue.card_tool(tenantid, name)

    def external(self, tenantid: int, name: str) -> bool:
        return self._catalogue.external(tenantid, name)

    def proposer(self, name: str, presented: Agent) -> Agent | None:
        """A registered agent of that name, else the presenting surface's agent if it bears
        that name (the usual case: one agent proposes and its surface presents the press).

        Never the presenting agent under another name: a surface whose agent may use a tool
        must not lend that permission to a card another agent proposed.
        """
        known = self._agents.get(name)
        if known is not None:
            return known
        for prefix, family in self._families.items():
            if name.startswith(prefix):
                # One agent per caller of a family ("mcp/Claude Desktop/claude-ai"), each
                # named for the audit, all with the family's allow-list.
                return Agent(name, family.tools)
        return presented if presented.name == name else None

    async def context(
        self,
        session: AsyncSession,
        caller: Caller,
        now: datetime,
        card_id: str | None = None,
        *,
        approved_by: str | None = None,
    ) -> ToolContext:
        name = await self._names.get(session, caller.tenantid)
        return ToolContext(
            caller, session, now, tenant_name=name, card_id=card_id, approved_by=approved_by
        )
