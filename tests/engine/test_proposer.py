"""Approval checks the allow-list of the agent that proposed the card, not the presenting one's."""

from __future__ import annotations

import pytest

from tests.engine.conftest import ARJUN, EVERYTHING, SteppedClock
from tests.engine.toy import TOY_TOOLS
from tools import Agent, CardSigner, CardStatus, Registry
from tools.audit.log import AuditLog, Outcome
from tools.db import Database
from tools.errors import NotAllowedError
from tools.toolsets.merchant.models import Branch
from tools.toolsets.merchant.scope import tenant_name

RENAME_ARGS = {"branch_id": 1, "name": "Indiranagar East"}


def _knowing(db: Database, signer: CardSigner, clock: SteppedClock, *agents: Agent) -> Registry:
    """A registry over the toy tools, as another process would build it, knowing ``agents``."""
    return Registry(db, signer, TOY_TOOLS, clock=clock, tenant_names=tenant_name, agents=agents)


async def _card(registry: Registry, agent: Agent) -> tuple[str, str]:
    proposal = (await registry.call(agent, "rename_branch", RENAME_ARGS, ARJUN)).proposal
    assert proposal is not None
    return proposal.card, proposal.card_id


async def _unchanged(registry: Registry, db: Database, card_id: str) -> None:
    record = await registry.card(card_id)
    assert record is not None and record.status is CardStatus.PENDING
    async with db.session() as session:
        branch = await session.get(Branch, 1)
        assert branch is not None and branch.name == "Indiranagar"
    last = (await AuditLog(db).recent(card_id=card_id))[0]
    assert last.outcome == Outcome.REFUSED


async def test_card_is_checked_against_its_proposers_narrowed_allow_list(
    signer: CardSigner, db: Database, clock: SteppedClock
) -> None:
    """A card proposed by 'pricing' is refused once 'pricing' may no longer rename, even when
    the pressing surface's agent may use every tool; the refusal is audited under 'pricing'."""
    pricing = Agent.only("pricing", ["count_branches", "rename_branch"])
    registry = _knowing(db, signer, clock, pricing)
    token, card_id = await _card(registry, pricing)
    # Another process (or a later deploy) where 'pricing' lost rename_branch.
    narrowed = _knowing(db, signer, clock, Agent.only("pricing", ["count_branches"]))

    with pytest.raises(NotAllowedError) as refused:
        await narrowed.approve(EVERYTHING, token, ARJUN)
    assert refused.value.agent == "pricing"

    await _unchanged(registry, db, card_id)
    assert (await AuditLog(db).recent(card_id=card_id))[0].agent == "pricing"


async def test_card_of_an_unknown_agent_is_refused(db: Database, registry: Registry) -> None:
    """A card whose stored agent this registry does not know is refused, though the presenting
    agent (another name) allows the tool: a surface does not lend its permissions to a card."""
    token, card_id = await _card(registry, Agent("ghost"))

    with pytest.raises(NotAllowedError) as refused:
        await registry.approve(EVERYTHING, token, ARJUN)
    assert refused.value.agent == "ghost"

    await _unchanged(registry, db, card_id)


async def test_registered_definition_wins_over_a_presented_one_of_the_same_name(
    registry: Registry, db: Database, signer: CardSigner, clock: SteppedClock
) -> None:
    """With 'test' registered read-only, presenting an all-tools agent also named 'test' does
    not allow approving (nor proposing) a write."""
    token, card_id = await _card(registry, EVERYTHING)
    narrowed = _knowing(db, signer, clock, Agent.only(EVERYTHING.name, ["count_branches"]))

    with pytest.raises(NotAllowedError):
        await narrowed.approve(EVERYTHING, token, ARJUN)
    with pytest.raises(NotAllowedError):
        await narrowed.call(EVERYTHING, "rename_branch", RENAME_ARGS, ARJUN)

    record = await registry.card(card_id)
    assert record is not None and record.status is CardStatus.PENDING
