"""Every rule of the approval design, one named test each, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest
from sqlalchemy import select, update

from tests.engine import toy
from tests.engine.conftest import ARJUN, EVERYTHING, MEERA, RAVI, SAM, SECRET, SteppedClock
from tools import (
    NOT_DONE_NOTE,
    Agent,
    CardClaims,
    CardSigner,
    CardStatus,
    Registry,
    Scope,
    Tool,
    ToolContext,
)
from tools.audit.log import AuditLog, Outcome
from tools.cards.tokens import args_digest
from tools.db import AuditRow, Database, ProposalRow
from tools.errors import (
    CardDecidedError,
    CardExpiredError,
    CardMismatchError,
    InvalidArgumentsError,
    InvalidCardError,
    NeedsApprovalError,
    NotAllowedError,
    NotAWriteError,
    NotYourCardError,
    RoleRequiredError,
    UnknownToolError,
)
from tools.proposing.write import write_tool
from tools.tool import refuse_plain_call
from tools.toolsets.merchant.models import Branch

RENAME = {"branch_id": 1, "name": "Indiranagar East"}


async def _branch_name(db: Database, branch_id: int = 1) -> str:
    async with db.session() as session:
        branch = await session.get(Branch, branch_id)
        assert branch is not None
        return branch.name


async def _card(
    registry: Registry, tool: str = "rename_branch", args: dict[str, object] | None = None
) -> str:
    result = await registry.call(EVERYTHING, tool, args or RENAME, ARJUN)
    assert result.proposal is not None
    return result.proposal.card


async def _audit(db: Database) -> list[AuditRow]:
    return list(reversed(await AuditLog(db).recent(limit=100)))


def test_a_write_tool_cannot_be_built_with_a_plain_handler() -> None:
    """Tool refuses Scope.WRITE with any handler of its own, with or without the two halves."""
    base = Tool(name="w", description="d", args=toy.RenameArgs)
    with pytest.raises(TypeError):
        replace(base, scope=Scope.WRITE, handler=toy.count_branches)
    built = write_tool(base, toy.propose_rename, toy.execute_rename)
    assert built.handler is refuse_plain_call
    with pytest.raises(TypeError):
        replace(built, handler=toy.execute_rename)


async def test_a_write_tools_plain_handler_refuses(db: Database, registry: Registry) -> None:
    """Even called directly, a write tool's handler raises NeedsApprovalError and writes nothing."""
    tool = next(t for t in toy.TOY_TOOLS if t.name == "rename_branch")
    async with db.tenant_session(1) as session:
        ctx = ToolContext(ARJUN, session, registry.now())
        with pytest.raises(NeedsApprovalError):
            await tool.handler(ctx, toy.RenameArgs(**RENAME))  # type: ignore[arg-type]
    assert await _branch_name(db) == "Indiranagar"


async def test_model_path_call_of_a_write_changes_nothing_and_says_so(
    db: Database, registry: Registry
) -> None:
    """Registry.call of a write returns a proposal whose note says it has NOT been done."""
    result = await registry.call(EVERYTHING, "rename_branch", RENAME, ARJUN)
    assert await _branch_name(db) == "Indiranagar"
    assert result.note == NOT_DONE_NOTE
    assert "NOT been done" in result.note
    assert result.scope == "nothing has changed yet"
    shown = result.for_model()
    assert result.proposal is not None
    assert result.proposal.card not in repr(shown)
    assert shown["rows"][0]["summary"] == "Rename branch 1 from Indiranagar to Indiranagar East."
    rows = await _audit(db)
    assert (rows[-1].outcome, rows[-1].card_id) == (Outcome.PROPOSED, result.proposal.card_id)


async def test_approved_card_runs_once_and_audits_before_and_after(
    db: Database, registry: Registry
) -> None:
    """Approval executes the write, moves the card to done, and audits approved then done."""
    token = await _card(registry)
    decision = await registry.approve(EVERYTHING, token, ARJUN)
    assert decision.ok and decision.card.status is CardStatus.DONE
    assert decision.card.decided_by_name == "Arjun Mehta"
    assert await _branch_name(db) == "Indiranagar East"
    outcomes = [(r.outcome, r.detail) for r in await _audit(db)][-2:]
    assert outcomes == [(Outcome.APPROVED, "executing"), (Outcome.DONE, "done")]


async def test_tampered_token_is_refused_and_audited(db: Database, registry: Registry) -> None:
    """A token with a changed character is refused as invalid, and the refusal is audited."""
    token = await _card(registry)
    flipped = token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:]
    with pytest.raises(InvalidCardError):
        await registry.approve(EVERYTHING, flipped, ARJUN)
    assert (await _audit(db))[-1].outcome == Outcome.REFUSED
    assert await _branch_name(db) == "Indiranagar"


@pytest.mark.parametrize("token", ["", "garbage", "a.b.c", "x" * 5000, "eyJ.eyJ.eyJ"])
async def test_garbage_tokens_are_refusals_not_crashes(
    db: Database, registry: Registry, token: str
) -> None:
    """Empty, truncated, oversized and made-up tokens all raise InvalidCardError."""
    with pytest.raises(InvalidCardError):
        await registry.approve(EVERYTHING, token, ARJUN)
    assert (await _audit(db))[-1].outcome == Outcome.REFUSED


async def test_foreign_key_signed_token_is_refused(
    signer: CardSigner, registry: Registry, clock: SteppedClock
) -> None:
    """A card signed with a key this server does not hold is refused."""
    token = await _card(registry)
    claims = signer.parse(token)
    forged = CardSigner(["someone-else-secret-0123456789"], clock=clock).mint(claims)
    with pytest.raises(InvalidCardError):
        await registry.approve(EVERYTHING, forged, ARJUN)


async def test_rotated_key_still_accepts_older_cards(
    db: Database, registry: Registry, clock: SteppedClock
) -> None:
    """Cards minted with the previous key verify after rotation; new cards use the new key."""
    token = await _card(registry)
    signer = CardSigner(["new-secret-0123456789abcdef", SECRET], clock=clock)
    rotated = Registry(db, signer, toy.TOY_TOOLS, clock=clock)
    decision = await rotated.approve(EVERYTHING, token, ARJUN)
    assert decision.ok


async def test_expired_card_is_its_own_error_and_marks_the_card(
    db: Database, registry: Registry, clock: SteppedClock
) -> None:
    """Past the TTL the card is refused as expired (not invalid), stored as expired, audited."""
    token = await _card(registry)
    clock.step(timedelta(minutes=31))
    with pytest.raises(CardExpiredError) as expired:
        await registry.approve(EVERYTHING, token, ARJUN)
    record = await registry.card(str(expired.value.card_id))
    assert record is not None and record.status is CardStatus.EXPIRED
    assert (await _audit(db))[-1].outcome == Outcome.EXPIRED
    assert await _branch_name(db) == "Indiranagar"


async def test_other_users_card_is_refused(
    db: Database, signer: CardSigner, registry: Registry
) -> None:
    """Meera pressing Arjun's card gets NotYourCardError, audited; the card stays pending."""
    token = await _card(registry)
    with pytest.raises(NotYourCardError):
        await registry.approve(EVERYTHING, token, MEERA)
    last = (await _audit(db))[-1]
    assert (last.outcome, last.user_id) == (Outcome.REFUSED, MEERA.userid)
    assert (await registry.card(signer.parse(token).card_id)).status is CardStatus.PENDING  # type: ignore[union-attr]


async def test_other_tenants_card_is_refused(registry: Registry) -> None:
    """The same user id presented from another tenant is not the card's owner."""
    token = await _card(registry)
    impostor = replace(SAM, userid=ARJUN.userid)
    with pytest.raises(NotYourCardError):
        await registry.approve(EVERYTHING, token, impostor)


async def test_card_for_an_unknown_tool_is_refused(
    db: Database, signer: CardSigner, registry: Registry
) -> None:
    """A validly signed card naming a tool the registry does not have is refused."""
    claims = CardClaims("0" * 32, "transfer_money", ARJUN.userid, ARJUN.tenantid, "x")
    with pytest.raises(UnknownToolError):
        await registry.approve(EVERYTHING, signer.mint(claims), ARJUN)
    assert (await _audit(db))[-1].tool == "transfer_money"


async def test_card_for_a_read_tool_is_refused(signer: CardSigner, registry: Registry) -> None:
    """A signed card naming a read tool is refused: reads have nothing to approve."""
    claims = CardClaims("0" * 32, "count_branches", ARJUN.userid, ARJUN.tenantid, "x")
    with pytest.raises(NotAWriteError):
        await registry.approve(EVERYTHING, signer.mint(claims), ARJUN)


async def test_allow_list_is_checked_again_at_approval(registry: Registry) -> None:
    """A card outliving a narrower allow-list is refused, as at call time."""
    token = await _card(registry)
    reader = Agent.only("reader", ["count_branches"])
    with pytest.raises(NotAllowedError):
        await registry.approve(reader, token, ARJUN)
    with pytest.raises(NotAllowedError):
        await registry.call(reader, "rename_branch", RENAME, ARJUN)


async def test_role_is_checked_at_approval_against_the_live_role(
    db: Database, registry: Registry
) -> None:
    """Staff may ask but not approve (their card goes to the managers); a manager demoted after
    proposing is refused at approval."""
    staffs = await registry.call(EVERYTHING, "rename_branch", RENAME, RAVI)
    assert staffs.proposal is not None and staffs.proposal.routing is not None
    assert staffs.proposal.routing.routed
    with pytest.raises(NotYourCardError):
        await registry.approve(EVERYTHING, staffs.proposal.card, RAVI)
    token = await _card(registry)
    with pytest.raises(RoleRequiredError):
        await registry.approve(EVERYTHING, token, replace(ARJUN, role=RAVI.role))
    assert await _branch_name(db) == "Indiranagar"


async def test_unknown_tool_and_bad_arguments_are_distinct_errors(
    db: Database, registry: Registry
) -> None:
    """Registry.call names each refusal: unknown tool, invalid arguments; both audited."""
    with pytest.raises(UnknownToolError):
        await registry.call(EVERYTHING, "nope", {}, ARJUN)
    with pytest.raises(InvalidArgumentsError, match="branch number"):
        await registry.call(EVERYTHING, "rename_branch", {"name": "x"}, ARJUN)
    with pytest.raises(InvalidArgumentsError, match="sneaky"):
        await registry.call(EVERYTHING, "rename_branch", {**RENAME, "sneaky": 1}, ARJUN)
    assert [r.outcome for r in await _audit(db)] == [Outcome.REFUSED] * 3


async def _rewrite_args(
    db: Database, signer: CardSigner, token: str, args: dict[str, object]
) -> None:
    card_id = signer.parse(token).card_id
    async with db.session() as session, session.begin():
        await session.execute(
            update(ProposalRow).where(ProposalRow.id == card_id).values(args=args)
        )


async def test_schema_invalid_stored_arguments_are_refused(
    signer: CardSigner, db: Database, registry: Registry
) -> None:
    """Stored arguments that no longer fit the schema are refused before anything runs."""
    token = await _card(registry)
    await _rewrite_args(db, signer, token, {"branch_id": "one", "name": ""})
    with pytest.raises(InvalidArgumentsError):
        await registry.approve(EVERYTHING, token, ARJUN)
    assert await _branch_name(db) == "Indiranagar"


async def test_digest_mismatch_is_refused(
    signer: CardSigner, db: Database, registry: Registry
) -> None:
    """Valid but different stored arguments do not match the signed digest: what was shown runs."""
    token = await _card(registry)
    await _rewrite_args(db, signer, token, {**RENAME, "name": "Something Else"})
    with pytest.raises(CardMismatchError):
        await registry.approve(EVERYTHING, token, ARJUN)
    assert await _branch_name(db) == "Indiranagar"
    assert (await _audit(db))[-1].outcome == Outcome.REFUSED


async def test_approved_executing_is_audited_even_when_execute_raises(
    db: Database, signer: CardSigner, registry: Registry
) -> None:
    """The 'approved / executing' row is committed before a write that then blows up."""
    token = await _card(registry, "explode")
    with pytest.raises(RuntimeError, match="payment provider"):
        await registry.approve(EVERYTHING, token, ARJUN)
    rows = [(r.outcome, r.detail) for r in await _audit(db)][-2:]
    assert rows[0] == (Outcome.APPROVED, "executing")
    assert rows[1][0] == Outcome.FAILED and "payment provider" in rows[1][1]
    record = await registry.card(signer.parse(token).card_id)
    assert record is not None and record.status is CardStatus.FAILED


async def test_replayed_card_is_refused_with_who_decided(registry: Registry) -> None:
    """A card approved once cannot run again; the replay names who decided it and when."""
    token = await _card(registry)
    await registry.approve(EVERYTHING, token, ARJUN)
    with pytest.raises(CardDecidedError, match="approved by Arjun Mehta at"):
        await registry.approve(EVERYTHING, token, ARJUN)


async def test_fifty_concurrent_approvals_execute_exactly_once(
    db: Database, registry: Registry
) -> None:
    """Fifty simultaneous presses of one card: one execution, forty-nine CardDecidedError."""
    toy.SEEN_TYPES.clear()
    token = await _card(registry)
    outcomes = await asyncio.gather(
        *(registry.approve(EVERYTHING, token, ARJUN) for _ in range(50)), return_exceptions=True
    )
    done = [o for o in outcomes if not isinstance(o, BaseException)]
    refused = [o for o in outcomes if isinstance(o, CardDecidedError)]
    assert (len(done), len(refused)) == (1, 49)
    assert len(toy.SEEN_TYPES) == 1
    async with db.session() as session:
        approvals = await session.scalars(
            select(AuditRow).where(AuditRow.outcome == Outcome.APPROVED)
        )
        assert len(approvals.all()) == 1


async def test_state_changed_since_proposal_is_refused_at_execution(
    db: Database, registry: Registry
) -> None:
    """A branch closed between proposal and approval: the card fails with a reason, no write.

    The reason is the tool's own refusal: the card is resolved again before its write runs
    (``tools.approving.as_shown``), and resolving refuses a closed branch as it would have at proposal.
    """
    token = await _card(registry)
    async with db.session() as session, session.begin():
        await session.execute(update(Branch).where(Branch.id == 1).values(status="closed"))
    decision = await registry.approve(EVERYTHING, token, ARJUN)
    assert decision.card.status is CardStatus.FAILED
    assert decision.card.outcome == "Branch 1 (Indiranagar) is closed."
    assert await _branch_name(db) == "Indiranagar"


async def test_json_round_trip_keeps_every_argument_type(
    signer: CardSigner, registry: Registry
) -> None:
    """Ints, Decimals, dates and enums come back to execute as themselves, not floats or strings.

    The first version of this design read a request id sealed as 41 back as 41.0 and looked up
    request 0; it failed silently, as a card that seemed merely stale.
    """
    toy.SEEN_TYPES.clear()
    args = {**RENAME, "budget": "1250.50", "opens": "2026-12-01", "kind": "refund"}
    token = await _card(registry, args=args)
    await registry.approve(EVERYTHING, token, ARJUN)
    assert [(int, Decimal, dt.date, toy.RequestKind)] == toy.SEEN_TYPES
    record = await registry.card(signer.parse(token).card_id)
    assert record is not None
    assert record.args["budget"] == "1250.50" and record.args["branch_id"] == 1


async def test_token_stays_short_whatever_the_arguments(
    signer: CardSigner, registry: Registry
) -> None:
    """The token carries a digest, not the arguments: under 1,000 characters for a huge name."""
    token = await _card(registry, args={**RENAME, "name": "N" * 100})
    claims = signer.parse(token)
    assert len(token) < 1000
    record = await registry.card(claims.card_id)
    assert record is not None and claims.digest == args_digest(record.args)


async def test_reject_keeps_the_reason_and_blocks_approval(
    db: Database, registry: Registry
) -> None:
    """Rejecting moves the card to rejected with the reason; a later approval is refused."""
    token = await _card(registry)
    decision = await registry.reject(EVERYTHING, token, ARJUN, "  not this week  ")
    assert (decision.card.status, decision.card.reason) == (CardStatus.REJECTED, "not this week")
    with pytest.raises(CardDecidedError, match="rejected by Arjun Mehta"):
        await registry.approve(EVERYTHING, token, ARJUN)
    assert await _branch_name(db) == "Indiranagar"
    assert (await _audit(db))[-2].outcome == Outcome.REJECTED


async def test_reject_by_someone_else_is_refused(registry: Registry) -> None:
    """Only the card's owner can reject it either."""
    token = await _card(registry)
    with pytest.raises(NotYourCardError):
        await registry.reject(EVERYTHING, token, MEERA, "no")
