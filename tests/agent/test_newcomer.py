"""What a newcomer reads: refusals in their words, no dead ends, no glitches, no internal fields."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.agent import Assistant
from bot.agent.offline import understand
from bot.cards import wording
from tests.agent.conftest import ARJUN, RAVI, tool_calls
from tools.errors import NotFoundError


async def test_refusals_speak_the_users_words(assistant: Assistant) -> None:
    """A card routed away from its asker and an overlong note read as sentences about the
    people and the field, never as tool names or validator messages."""
    staff = await assistant.reply(conversation="a", caller=RAVI, text="approve request 3")
    assert (
        "your role cannot approve this, so the card below went to Arjun Mehta or Meera Iyer; "
        "they were told privately." in staff.text
    )
    long = await assistant.reply(
        conversation="b", caller=ARJUN, text="approve request 3 note: " + "x" * 501
    )
    assert "The note is too long: keep it within 500 characters." in long.text
    for reply in (staff.text, long.text):
        assert "approve_request" not in reply and "String should" not in reply


async def test_a_routed_card_needing_two_says_both_are_needed(assistant: Assistant) -> None:
    """Request 5 (₹42,000) from staff needs both managers: the reply names them with "and" and
    says two approvals are needed, as the card's heading does; never "one or the other"."""
    staff = await assistant.reply(conversation="two", caller=RAVI, text="approve request 5")
    assert "went to Arjun Mehta and Meera Iyer" in staff.text
    assert "needs 2 approvals from different people" in staff.text
    assert " or " not in staff.text


async def test_ones_own_request_says_who_approves_it_instead(assistant: Assistant) -> None:
    """Arjun asking to approve request 4, which he raised, is told the card went to Meera
    because someone else approves what he raised; not that his role falls short."""
    own = await assistant.reply(conversation="own", caller=ARJUN, text="approve request 4")
    assert (
        "someone else approve what you raised or asked for yourself, so the card below went "
        "to Meera Iyer" in own.text
    )
    assert "your role" not in own.text


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("orders", {}),
        ("orders today", {"today": True}),
        ("orders at Whitefield", {"branch": "Whitefield"}),
    ],
)
async def test_orders_can_be_listed(assistant: Assistant, text: str, args: dict[str, Any]) -> None:
    """ "orders", "orders today" and "orders at <branch>" list orders with their numbers."""
    reply = await assistant.reply(conversation="c", caller=ARJUN, text=text)
    assert tool_calls((await assistant.store.load("c")).messages) == [("list_orders", args)]
    assert "couldn't" not in reply.text and "all " not in reply.text.splitlines()[0]


async def test_a_missing_order_points_to_a_phrasing_that_works(assistant: Assistant) -> None:
    """ "There is no order N" suggests what to say next, and that phrasing is understood."""
    with pytest.raises(NotFoundError) as missing:
        await assistant.registry.call(assistant.agent, "get_order", {"order_id": 99999}, ARJUN)
    suggested = re.findall(r'"([^"]+)"', str(missing.value))
    assert suggested and all(not isinstance(understand(s), str) for s in suggested)
    assert "number" in str(missing.value)


async def test_an_order_after_a_refund_shows_money_names_and_times(assistant: Assistant) -> None:
    """ "show order 5" after a refund shows the refund's amount formatted and its approver by
    name: no minor units, no ids of people, no ISO timestamps."""
    registry = assistant.registry
    proposed = await registry.call(
        assistant.agent, "refund_order", {"order_id": 5, "amount": "100", "reason": "cold"}, ARJUN
    )
    assert proposed.proposal is not None
    await registry.approve(assistant.agent, proposed.proposal.card, ARJUN)
    reply = await assistant.reply(conversation="c", caller=ARJUN, text="show order 5")
    assert "₹100.00" in reply.text and "Arjun Mehta" in reply.text
    for leak in ("minor", " id ", "(person", "T0", "T1", "T2", "+00:00"):
        assert leak not in reply.text, reply.text


async def test_an_unmatched_message_gets_a_short_answer(assistant: Assistant) -> None:
    """Text no phrasing matches gets one or two lines saying what I can do and pointing to help."""
    reply = await assistant.reply(conversation="c", caller=ARJUN, text="what is the weather like")
    assert len(reply.text.splitlines()) <= 2
    assert "I can" in reply.text and '"help"' in reply.text


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("Can you approve request 6 please?", ("approve_request", {"request_id": 6})),
        ("approve #6", ("approve_request", {"request_id": 6})),
        ("req 6", ("get_request", {"request_id": 6})),
        ("show req 3", ("get_request", {"request_id": 3})),
        ("could you show request 3, thanks", ("get_request", {"request_id": 3})),
        ("please reject req 6 because dup", ("reject_request", {"request_id": 6, "reason": "dup"})),
        ("Orders today at Whitefield", ("list_orders", {"branch": "Whitefield", "today": True})),
    ],
)
def test_polite_and_loose_phrasings(text: str, call: tuple[str, dict[str, Any]]) -> None:
    """Polite wrappers, "#6" and "req" reach the same tool call as the plain phrasing."""
    assert understand(text) == call


async def test_counts_agree_and_sentences_end_once(assistant: Assistant) -> None:
    """Scope lines say "1 order" and "2 pending requests" (never "1 orders" or "all 2"), and a
    failure that already says nothing was changed is not followed by ".. Nothing was changed."."""
    one = await assistant.registry.call(
        assistant.agent, "list_requests", {"branch": "Whitefield"}, ARJUN
    )
    assert re.search(r": \d+ pending requests? at Whitefield$", one.scope), one.scope
    assert "all " not in one.scope
    label, text = wording.outcome("failed", "It costs ₹5 already, so nothing was changed.", None)
    assert (label, text) == ("Outcome", "failed — It costs ₹5 already, so nothing was changed.")
    assert ".." not in wording.outcome("failed", "Out of stock.", None)[1]  # type: ignore[index]
