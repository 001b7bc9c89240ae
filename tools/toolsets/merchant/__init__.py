"""The reference toolset over a merchant's data: reads that answer, writes that propose.

``build_registry`` is how a surface gets a registry holding every merchant tool; the two agents
are the default (every tool) and a read-only one.
"""

from __future__ import annotations

from tools.agent import Agent
from tools.cards.lease import ProcessLease
from tools.cards.tokens import CardSigner, Clock, utcnow
from tools.db import Database
from tools.registry import ALL_TOOLS, Registry
from tools.toolsets.cards import CARD_TOOLS
from tools.toolsets.merchant.reads import READ_TOOLS
from tools.toolsets.merchant.scope import tenant_name
from tools.toolsets.merchant.writes import WRITE_TOOLS

__all__ = ["DEFAULT_AGENT", "READ_ONLY_AGENT", "READ_TOOLS", "WRITE_TOOLS", "build_registry"]

DEFAULT_AGENT = ALL_TOOLS
READ_ONLY_AGENT = Agent.only(
    "countersign-readonly", (tool.name for tool in [*READ_TOOLS, *CARD_TOOLS])
)


def build_registry(
    db: Database,
    signer: CardSigner,
    *,
    clock: Clock = utcnow,
    lease: ProcessLease | None = None,
) -> Registry:
    """A registry with every merchant tool, sharing ``db`` for data, cards and audit;
    ``lease``: this process's, when the bot's own rows share it (a new one otherwise)."""
    tools = [*READ_TOOLS, *CARD_TOOLS, *WRITE_TOOLS]
    return Registry(db, signer, tools, clock=clock, tenant_names=tenant_name, lease=lease)
