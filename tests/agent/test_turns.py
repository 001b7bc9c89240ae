"""A turn acts as the person who wrote the message: proposals, refusals, and no token for the model."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bot.agent import Assistant
from bot.settings import Settings
from tests.agent.conftest import ARJUN, RAVI, Recorder, tool_calls
from tools import CardSigner, Registry
from tools.db import Database
from tools.toolsets.merchant.models import BranchRequest


async def _status(db: Database, request_id: int) -> str:
    async with db.tenant_session(1) as session:
        row = await session.get(BranchRequest, request_id)
        assert row is not None
        return row.status


async def test_approve_as_a_manager_proposes_and_changes_nothing(
    signer: CardSigner, assistant: Assistant, registry: Registry, db: Database
) -> None:
    """A manager's "approve request 3" returns one card issued to them; request 3 stays pending."""
    reply = await assistant.reply(conversation="t", caller=ARJUN, text="approve request 3")
    assert len(reply.proposals) == 1
    claims = signer.parse(reply.proposals[0].card)
    assert (claims.tool, claims.userid, claims.tenantid) == ("approve_request", 2, 1)
    assert "Not done yet" in reply.text
    assert "waiting for your approval" in reply.text
    assert await _status(db, 3) == "pending"


async def test_staff_approve_goes_to_the_managers(
    signer: CardSigner, assistant: Assistant, registry: Registry, db: Database
) -> None:
    """Ravi (staff) asking to approve gets a card issued to the managers and owner, not him;
    the reply says so, and nothing changes."""
    reply = await assistant.reply(conversation="t", caller=RAVI, text="approve request 3")
    [proposal] = reply.proposals
    assert proposal.routing is not None and proposal.routing.routed
    assert [i.name for i in proposal.routing.issued_to] == ["Arjun Mehta", "Meera Iyer"]
    assert signer.parse(proposal.card).userid == RAVI.userid
    assert "went to Arjun Mehta or Meera Iyer" in reply.text
    assert await _status(db, 3) == "pending"


async def test_a_shared_thread_acts_as_each_writer(
    signer: CardSigner, assistant: Assistant, registry: Registry
) -> None:
    """In one thread Ravi's words make a card he asked for (routed to the managers); Arjun's
    same words, as Arjun, point to that live card instead of making a second one."""
    asked = await assistant.reply(conversation="thread", caller=RAVI, text="approve request 3")
    again = await assistant.reply(conversation="thread", caller=ARJUN, text="approve request 3")
    assert [signer.parse(p.card).userid for p in asked.proposals] == [RAVI.userid]
    assert again.proposals == []
    assert "already waiting on a card" in again.text
    prompts = [m for m in (await assistant.store.load("thread")).messages if _prompt(m)]
    assert [_prompt(m)[:28] for m in prompts] == [
        "[from Ravi Kumar, staff] app",
        "[from Arjun Mehta, manager] ",
    ]


def _prompt(message: ModelMessage) -> str:
    parts = getattr(message, "parts", [])
    texts = [
        p.content for p in parts if p.part_kind == "user-prompt" and isinstance(p.content, str)
    ]
    return texts[-1] if texts else ""


async def test_the_model_never_sees_a_signed_card(assistant: Assistant, recorder: Recorder) -> None:
    """Across proposals the model is sent no card token, and none is stored in the history."""
    cards = []
    for text in ("approve request 3", "refund order 5 100", "reject request 2 because duplicate"):
        reply = await assistant.reply(conversation="t", caller=ARJUN, text=text)
        cards += [p.card for p in reply.proposals]
    assert len(cards) == 3
    assert all(len(card) > 40 for card in cards)
    sent = recorder.text()
    stored = (await assistant.store.load("t")).messages
    assert "Not done yet" in sent or "NOT been done" in sent
    for card in cards:
        assert card not in sent
        assert card.split(".")[0] not in sent
        assert card not in repr(stored)


async def test_the_caller_comes_from_the_turn_not_the_model(
    signer: CardSigner, registry: Registry, settings: Settings, db: Database
) -> None:
    """A model claiming Priya the owner in its arguments is refused; with the arguments alone,
    the card is still Ravi's (staff), so it goes to the managers and he cannot approve it."""

    async def impostor(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            return ModelResponse(parts=[TextPart(messages[-1].parts[-1].model_response_str())])
        args: dict[str, Any] = {"request_id": 3, "userid": 1, "role": "owner"}
        return ModelResponse(parts=[ToolCallPart("approve_request", args)])

    assistant = Assistant(registry, db, settings, model=FunctionModel(impostor))
    reply = await assistant.reply(conversation="t", caller=RAVI, text="approve request 3")
    assert reply.proposals == []
    assert "There is no 'userid' setting here." in reply.text
    assert tool_calls((await assistant.store.load("t")).messages)[0][0] == "approve_request"

    async def plain(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if isinstance(messages[-1].parts[-1], ToolReturnPart):
            return ModelResponse(parts=[TextPart("ok")])
        return ModelResponse(parts=[ToolCallPart("approve_request", {"request_id": 3})])

    assistant = Assistant(registry, db, settings, model=FunctionModel(plain))
    [card] = (await assistant.reply(conversation="u", caller=RAVI, text="as Priya")).proposals
    assert signer.parse(card.card).userid == RAVI.userid
    assert card.routing is not None and RAVI.userid not in [
        i.userid for i in card.routing.issued_to
    ]
    assert await _status(db, 3) == "pending"
