"""A merchant's own MCP servers behind the card: reads run, writes wait, Approve sends once."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.engine.conftest import ARJUN, MEERA, PRIYA, RAVI, SAM
from tests.mcp.conftest import connect, connect_url
from tests.support.mcp_servers import HostileState, payments_with_key
from tools import Registry
from tools.audit.log import AuditLog, Outcome
from tools.cards.record import CardStatus
from tools.cards.store import CardStore
from tools.db import AuditRow, Database
from tools.errors import ConflictError, InvalidArgumentsError, NotFoundError, UnknownToolError
from tools.keeping.reconcile import UNKNOWN_NOTE
from tools.people.policy import Policies
from tools.tool import Scope
from tools.toolsets.mcp import IDEMPOTENCY_KEY, Sources

pytestmark = pytest.mark.slow


async def _offered(registry: Registry, tenantid: int) -> dict[str, Scope]:
    return {t.name: t.scope for t in await registry.offered(registry.default_agent, tenantid)}


async def test_a_trusted_read_runs_and_is_audited(
    registry: Registry, db: Database, ledger_stdio: list[str]
) -> None:
    """A read the owner trusted runs on the server, its rows reach the model, and it is audited."""
    await connect(db, 1, "ledger", ledger_stdio, trust_annotations=True)

    result = await registry.call(registry.default_agent, "ledger__list_suppliers", {}, ARJUN)

    assert result.proposal is None
    assert "SUP-001" in str(result.for_model()["rows"])
    async with db.session() as session:
        rows = (await session.scalars(select(AuditRow))).all()
    assert any(row.tool == "ledger__list_suppliers" and row.scope == "read" for row in rows)


async def test_an_untrusted_servers_read_only_tool_is_still_a_write(
    registry: Registry, db: Database, hostile_stdio: list[str]
) -> None:
    """Without --trust-annotations, readOnlyHint decides nothing: the tool proposes a card."""
    await connect(db, 1, "odd", hostile_stdio)

    offered = await _offered(registry, 1)

    assert offered["odd__lookup_order"] is Scope.WRITE
    assert offered["odd__approve_request"] is Scope.WRITE
    # The reference tool of that name is untouched beside it.
    assert offered["approve_request"] is Scope.WRITE
    tools = {t.name: t for t in await registry.offered(registry.default_agent, 1)}
    assert tools["approve_request"].external is False


async def test_a_write_is_a_card_and_nothing_is_sent_before_approve(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """The card lists every argument as it will be sent; the server hears nothing until Approve,
    then exactly those arguments once, with the card id as the idempotency key."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    args = {"to": "ACC_77*~`", "amount": 125.5}
    before = len(hostile_state.calls("transfer"))

    proposal = (await registry.call(registry.default_agent, "odd__transfer", args, ARJUN)).proposal

    assert proposal is not None
    assert proposal.summary == "Transfer money on the odd server."
    shown = {d.label: d.value for d in proposal.details}
    assert shown["to"] == "ACC_77*~`"
    assert shown["amount"] == "125.5"
    assert proposal.warning == "The odd server marks this as destructive."
    assert len(hostile_state.calls("transfer")) == before

    decision = await registry.approve(registry.default_agent, proposal.card, ARJUN)

    assert decision.card.status is CardStatus.DONE
    sent = [c for c in hostile_state.calls("transfer") if c["meta"].get(IDEMPOTENCY_KEY)]
    assert [(c["arguments"], c["meta"][IDEMPOTENCY_KEY]) for c in sent[before:]] == [
        (args, proposal.card_id)
    ]
    with pytest.raises(Exception, match="already approved"):
        await registry.approve(registry.default_agent, proposal.card, ARJUN)
    assert len(hostile_state.calls("transfer")) == before + 1


async def test_the_ledger_dedupes_on_the_card_id(
    registry: Registry, db: Database, ledger_stdio: list[str], ledger_db: Path
) -> None:
    """The demo ledger records one payment per card id: the key a server can dedupe on."""
    await connect(
        db,
        1,
        "ledger",
        ledger_stdio,
        trust_annotations=True,
        rules={"record_payment": {"amount": "amount", "targets": ["supplier_id"]}},
    )
    args = {"supplier_id": "SUP-001", "amount": 7800.5, "reference": "INV_2026_001"}
    proposal = (
        await registry.call(registry.default_agent, "ledger__record_payment", args, ARJUN)
    ).proposal
    assert proposal is not None
    assert proposal.amount == 780050
    assert proposal.target == "mcp:ledger:record_payment:supplier_id=SUP-001"

    decision = await registry.approve(registry.default_agent, proposal.card, ARJUN)

    assert decision.card.status is CardStatus.DONE, decision.card.outcome
    assert payments_with_key(ledger_db, proposal.card_id) == 1


async def test_staff_are_routed_and_two_approvers_come_from_the_amount(
    registry: Registry, db: Database, ledger_stdio: list[str]
) -> None:
    """The owner's rules apply as to any tool: a manager's role, and two approvers above the
    merchant's amount, read from the argument the owner named."""
    await connect(
        db,
        1,
        "ledger",
        ledger_stdio,
        trust_annotations=True,
        rules={"record_payment": {"role": "manager", "amount": "amount"}},
    )
    policies = Policies(db)
    from dataclasses import replace

    await policies.put(1, replace(await policies.get(1), two_approvers_from=500_000))
    args = {"supplier_id": "SUP-002", "amount": 9000, "reference": "R-1"}

    proposal = (
        await registry.call(registry.default_agent, "ledger__record_payment", args, RAVI)
    ).proposal

    assert proposal is not None
    assert proposal.routing is not None
    assert proposal.routing.routed
    assert proposal.routing.approvals == 2
    assert RAVI.userid not in {i.userid for i in proposal.routing.issued_to}
    first = await registry.approve(registry.default_agent, proposal.card, ARJUN)
    assert first.partly
    second = await registry.approve(registry.default_agent, proposal.card, MEERA)
    assert second.card.status is CardStatus.DONE, second.card.outcome


async def test_an_edit_proposes_the_write_again_with_the_change(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """Edit changes only the arguments the owner named; the new card runs with the change."""
    await connect(db, 1, "odd", hostile_stdio, rules={"transfer": {"editable": ["amount"]}})
    args = {"to": "ACC-9", "amount": 10}
    proposal = (await registry.call(registry.default_agent, "odd__transfer", args, ARJUN)).proposal
    assert proposal is not None
    assert proposal.editable == ("amount",)
    with pytest.raises(InvalidArgumentsError):
        await registry.edit(registry.default_agent, proposal.card, ARJUN, {"to": "ACC-0"})

    edited = (
        await registry.edit(registry.default_agent, proposal.card, ARJUN, {"amount": 12})
    ).proposal
    assert edited is not None
    decision = await registry.approve(registry.default_agent, edited.card, ARJUN)

    assert decision.card.status is CardStatus.DONE
    assert [
        c["arguments"]
        for c in hostile_state.calls("transfer")
        if c["meta"].get(IDEMPOTENCY_KEY) == edited.card_id
    ] == [{"to": "ACC-9", "amount": 12}]


async def test_another_merchant_never_sees_them(
    registry: Registry, db: Database, hostile_stdio: list[str]
) -> None:
    """Harbor Books' model is not offered Fiesta's MCP tools and cannot call them by name."""
    await connect(db, 1, "odd", hostile_stdio)

    assert not [name for name in await _offered(registry, 2) if name.startswith("odd__")]
    with pytest.raises(UnknownToolError):
        await registry.call(registry.default_agent, "odd__transfer", {"to": "x", "amount": 1}, SAM)


async def test_a_server_down_before_the_call_fails_the_card_with_nothing_sent(
    registry: Registry, db: Database, hostile_stdio: list[str]
) -> None:
    """A card whose server stops answering before Approve fails, saying nothing was sent."""
    config = await connect(db, 1, "odd", hostile_stdio)
    args = {"to": "ACC-1", "amount": 1}
    proposal = (await registry.call(registry.default_agent, "odd__transfer", args, PRIYA)).proposal
    assert proposal is not None
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    await Sources(db).put(
        1,
        config.model_copy(
            update={"command": None, "args": (), "url": f"http://127.0.0.1:{port}/mcp"}
        ),
    )

    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)

    assert decision.card.status is CardStatus.FAILED
    assert decision.card.outcome is not None
    assert "nothing was sent" in decision.card.outcome


async def test_a_connection_lost_after_sending_is_outcome_unknown(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A server that dies after receiving the call leaves the card "outcome unknown", not done
    and not failed, and nothing is sent again."""
    await connect(db, 1, "odd", hostile_stdio)
    proposal = (
        await registry.call(registry.default_agent, "odd__crash_mid_call", {"note": "n"}, PRIYA)
    ).proposal
    assert proposal is not None

    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)

    assert decision.card.status is CardStatus.UNKNOWN
    assert decision.card.outcome is not None
    assert decision.card.outcome.startswith("outcome unknown")
    keyed = [
        c
        for c in hostile_state.calls("crash_mid_call")
        if c["meta"].get(IDEMPOTENCY_KEY) == proposal.card_id
    ]
    assert len(keyed) == 1


async def test_a_new_tool_is_a_write_and_a_vanished_ones_cards_fail_clearly(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A tool that appears is a write until the owner classifies it; when it vanishes, its live
    card fails at Approve saying the server no longer offers it, and nothing is sent."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    assert "odd__appearing_tool" not in await _offered(registry, 1)
    hostile_state.show_appearing(True)
    try:
        assert (await _offered(registry, 1))["odd__appearing_tool"] is Scope.WRITE
        proposal = (
            await registry.call(registry.default_agent, "odd__appearing_tool", {}, PRIYA)
        ).proposal
        assert proposal is not None
    finally:
        hostile_state.show_appearing(False)

    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)

    assert decision.card.status is CardStatus.FAILED
    assert decision.card.outcome == (
        "The odd server no longer offers appearing_tool; nothing was sent."
    )
    assert not hostile_state.calls("appearing_tool")


async def test_annotations_flipped_after_proposal_still_run_the_card_as_a_write_once(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A server that calls a write read-only after its card was drawn cannot turn the card into
    a read, even once the owner accepted that: Approve runs it as the write it was agreed to,
    once."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    args = {"name": "vip", "value": True}
    proposal = (await registry.call(registry.default_agent, "odd__set_flag", args, PRIYA)).proposal
    assert proposal is not None
    hostile_state.claim_read_only(True)
    try:
        await Sources(db).review(1, "odd", {"set_flag": Scope.READ})
        assert (await _offered(registry, 1))["odd__set_flag"] is Scope.READ
        decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)
    finally:
        hostile_state.claim_read_only(False)

    assert decision.card.status is CardStatus.DONE
    keyed = [
        c
        for c in hostile_state.calls("set_flag")
        if c["meta"].get(IDEMPOTENCY_KEY) == proposal.card_id
    ]
    assert len(keyed) == 1


async def test_a_tool_description_is_the_servers_words_not_instructions(
    registry: Registry, db: Database, hostile_stdio: list[str]
) -> None:
    """The model reads a hostile description as what the server says, under whose it is."""
    await connect(db, 1, "odd", hostile_stdio)

    tool = next(
        t
        for t in await registry.offered(registry.default_agent, 1)
        if t.name == "odd__lookup_order"
    )

    assert tool.description.startswith(
        "A tool of the merchant's odd server (MCP). The server describes it as: "
    )


async def test_a_huge_result_is_cut_with_a_scope_line(
    registry: Registry, db: Database, hostile_stdio: list[str]
) -> None:
    """2 MB of rows reaches the model cut to its limit (40,000 characters), and says it was cut."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)

    shown = (
        await registry.call(registry.default_agent, "odd__huge_result", {"rows": 10_000}, PRIYA)
    ).for_model()

    assert 40_000 <= len(str(shown["rows"])) < 41_000
    assert "cut to first 40,000 of " in shown["scope"]


async def test_a_slow_server_hits_its_timeout(
    registry: Registry, db: Database, hostile_stdio: list[str]
) -> None:
    """A read that takes longer than the source's timeout is given up with a clear reason."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True, timeout=1)

    with pytest.raises(NotFoundError, match="did not answer within 1 s"):
        await registry.call(registry.default_agent, "odd__sleep", {"seconds": 30}, PRIYA)


async def test_a_dry_run_preview_shows_the_diff_and_approve_writes_it(
    registry: Registry, db: Database, filesystem_stdio: list[str], filesystem_root: Path
) -> None:
    """npm's filesystem server previews edit_file with dryRun: the card shows the diff, the file
    is unchanged until Approve, and then changed once."""
    note = filesystem_root / "notes_q4.txt"
    note.write_text("price: 52\n")
    await connect(
        db,
        1,
        "files",
        filesystem_stdio,
        trust_annotations=True,
        rules={"edit_file": {"preview": {"kind": "dry_run", "name": "dryRun"}}},
    )
    args = {"path": str(note), "edits": [{"oldText": "price: 52", "newText": "price: 40"}]}

    proposal = (
        await registry.call(registry.default_agent, "files__edit_file", args, PRIYA)
    ).proposal

    assert proposal is not None
    preview = {d.label: d.value for d in proposal.details}["Preview"]
    assert "-price: 52" in preview
    assert "+price: 40" in preview
    assert note.read_text() == "price: 52\n"
    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)
    assert decision.card.status is CardStatus.DONE, decision.card.outcome
    assert note.read_text() == "price: 40\n"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"], indirect=True)
async def test_on_both(registry: Registry, db: Database, ledger_http: str, ledger_db: Path) -> None:
    """Over streamable HTTP, on both databases: a read, then a payment approved once."""
    await connect_url(db, 1, "ledger", ledger_http, trust_annotations=True)
    read = await registry.call(registry.default_agent, "ledger__list_suppliers", {}, ARJUN)
    assert "SUP-002" in str(read.rows)
    args = {"supplier_id": "SUP-002", "amount": 100, "reference": "HTTP-1"}
    proposal = (
        await registry.call(registry.default_agent, "ledger__record_payment", args, ARJUN)
    ).proposal
    assert proposal is not None

    decision = await registry.approve(registry.default_agent, proposal.card, ARJUN)

    assert decision.card.status is CardStatus.DONE, decision.card.outcome
    assert payments_with_key(ledger_db, proposal.card_id) == 1


async def test_a_tool_error_fails_the_card_with_the_servers_message(
    registry: Registry, db: Database, ledger_stdio: list[str], ledger_db: Path
) -> None:
    """A write the server answers with isError fails its card with what the server said."""
    await connect(db, 1, "ledger", ledger_stdio, trust_annotations=True)
    args = {"supplier_id": "SUP-999", "amount": 10, "reference": "NOPE-1"}
    proposal = (
        await registry.call(registry.default_agent, "ledger__record_payment", args, PRIYA)
    ).proposal
    assert proposal is not None

    decision = await registry.approve(registry.default_agent, proposal.card, PRIYA)

    assert decision.card.status is CardStatus.FAILED
    assert decision.card.outcome is not None
    assert decision.card.outcome.startswith("the ledger server refused it: ")
    assert "SUP-999" in decision.card.outcome
    assert payments_with_key(ledger_db, proposal.card_id) == 0


async def test_a_stdio_server_that_died_is_started_again(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """After its server process died mid-call, the next read starts it again and is answered."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    proposal = (
        await registry.call(registry.default_agent, "odd__crash_mid_call", {}, PRIYA)
    ).proposal
    assert proposal is not None
    await registry.approve(registry.default_agent, proposal.card, PRIYA)
    pids = {c["pid"] for c in hostile_state.calls("crash_mid_call")}

    shown = await registry.call(registry.default_agent, "odd__sleep", {"seconds": 0}, PRIYA)

    assert "Slept" in str(shown.rows)
    assert hostile_state.calls("sleep")[-1]["pid"] not in pids


async def test_a_companion_preview_that_writes_is_refused_before_anything_is_sent(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A preview tool must be a read by the owner's rules: a write named as the companion (here
    ``transfer`` as its own) makes no card and is never called, since drawing a card is on the
    model's path. It used to be called with the card's arguments, before anyone approved."""
    await connect(
        db,
        1,
        "odd",
        hostile_stdio,
        rules={"transfer": {"preview": {"kind": "tool", "name": "transfer"}}},
    )
    before = len(hostile_state.calls("transfer"))

    with pytest.raises(ConflictError, match="is not a read by the owner's rules"):
        await registry.call(
            registry.default_agent, "odd__transfer", {"to": "ACC-5", "amount": 9}, PRIYA
        )

    assert len(hostile_state.calls("transfer")) == before


async def test_an_answer_after_the_card_was_settled_keeps_the_card_and_is_audited(
    registry: Registry, db: Database, hostile_stdio: list[str], hostile_state: HostileState
) -> None:
    """A write whose card another process's reconciler settled as outcome unknown while the
    server took its time leaves the card as people were shown it, and its audit line records
    what the server answered: it used to be rolled back as "interrupted", the answer lost."""
    await connect(db, 1, "odd", hostile_stdio, trust_annotations=True)
    assert await registry.card_tool(1, "odd__slow_transfer") is not None  # started, listed
    args = {"to": "ACC-8", "amount": 8, "seconds": 2}
    proposal = (
        await registry.call(registry.default_agent, "odd__slow_transfer", args, PRIYA)
    ).proposal
    assert proposal is not None
    pressed = asyncio.create_task(registry.approve(registry.default_agent, proposal.card, PRIYA))
    while not [c for c in hostile_state.calls("slow_transfer") if c["arguments"] == args]:  # noqa: ASYNC110
        await asyncio.sleep(0.02)  # the server's call log is another process's file
    assert await CardStore(db).move(
        proposal.card_id, frm=CardStatus.EXECUTING, to=CardStatus.UNKNOWN, outcome=UNKNOWN_NOTE
    )

    decision = await pressed

    assert (decision.card.status, decision.card.outcome) == (CardStatus.UNKNOWN, UNKNOWN_NOTE)
    latest = (await AuditLog(db).recent(card_id=proposal.card_id))[0]
    assert latest.outcome == Outcome.DONE
    assert "Transferred 8.0 to ACC-8" in latest.detail
    assert "answered after the card was settled as outcome_unknown" in latest.detail
