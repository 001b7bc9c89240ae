"""The offline model: each documented phrasing calls the right real tool and reads well."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from bot.agent import Assistant
from bot.agent.offline import normalise, understand
from bot.settings import Settings
from tests.agent.conftest import ARJUN, PRIYA, RAVI, Recorder, tool_calls
from tools import Caller, Registry, time_stamp
from tools.db import Database
from tools.toolsets.merchant import READ_ONLY_AGENT

PHRASINGS: list[tuple[Caller, str, str | None, dict[str, Any], list[str]]] = [
    (ARJUN, "help", None, {}, ["pending requests", "refund order <number> [amount]"]),
    (
        ARJUN,
        "<@U123> Pending requests?",
        "list_requests",
        {"status": "pending"},
        ["#3", "Whitefield", "₹5,000.00", "#6"],
    ),
    (
        ARJUN,
        "requests at whitefield",
        "list_requests",
        {"branch": "whitefield"},
        ["#3", "#5", "Whitefield"],
    ),
    (
        ARJUN,
        "show request #3",
        "get_request",
        {"request_id": 3},
        ["Corporate lunch", "Ravi Kumar", "discount"],
    ),
    (
        ARJUN,
        "approve request 3",
        "approve_request",
        {"request_id": 3},
        ["Not done yet", "request 3", "waiting for your approval"],
    ),
    (
        ARJUN,
        "Reject request 2 because it is a duplicate of 6.",
        "reject_request",
        {"request_id": 2, "reason": "it is a duplicate of 6"},
        ["Not done yet", "request 2"],
    ),
    (ARJUN, "branches", "list_branches", {}, ["Indiranagar", "MG Road", "closed"]),
    (
        PRIYA,
        "close branch Koramangala",
        "close_branch",
        {"branch": "Koramangala"},
        ["Not done yet", "Koramangala"],
    ),
    (
        PRIYA,
        "reopen branch MG Road",
        "reopen_branch",
        {"branch": "MG Road"},
        ["Not done yet", "MG Road"],
    ),
    (ARJUN, "show order 5", "get_order", {"order_id": 5}, ["Order", "5"]),
    (
        ARJUN,
        "refund order 5 100",
        "refund_order",
        {"order_id": 5, "amount": "100"},
        ["Not done yet", "₹100.00", "order 5"],
    ),
    (
        ARJUN,
        "stock at Indiranagar",
        "stock_levels",
        {"branch": "Indiranagar"},
        ["FF-PANEER-WRAP", "in stock"],
    ),
    (
        PRIYA,
        "set price of FF-MASALA-DOSA to 130",
        "set_price",
        {"sku": "FF-MASALA-DOSA", "price": "130"},
        ["Not done yet", "₹130.00"],
    ),
    (ARJUN, "sales this week", "sales_summary", {"period": "this_week"}, ["Koramangala", "orders"]),
    (ARJUN, "what is the weather like", None, {}, ["I didn't catch that", '"help"']),
]


@pytest.mark.parametrize(
    ("caller", "text", "tool", "args", "words"),
    PHRASINGS,
    ids=[p[1] for p in PHRASINGS],
)
async def test_phrasing_calls_the_tool_and_phrases_the_result(
    assistant: Assistant,
    caller: Caller,
    text: str,
    tool: str | None,
    args: dict[str, Any],
    words: list[str],
) -> None:
    """Each documented phrasing makes exactly its tool call and a reply built from its result."""
    reply = await assistant.reply(conversation="c", caller=caller, text=text)
    stored = await assistant.store.load("c")
    assert tool_calls(stored.messages) == ([(tool, args)] if tool else [])
    # A proposal's reply is one line; what it proposes is on its card (the proposal).
    shown = reply.text + "".join(p.summary for p in reply.proposals)
    for word in words:
        assert word in shown
    assert "couldn't" not in reply.text


async def test_which_branch_sold_the_most_is_answered_from_the_sales_summary(
    assistant: Assistant,
) -> None:
    """ "which branch sold the most this week?" reads the sales summary and names the branch
    with the highest net first, the others after it in order; it got "I didn't catch that"."""
    reply = await assistant.reply(
        conversation="c", caller=ARJUN, text="Which branch sold the most this week?"
    )
    assert tool_calls((await assistant.store.load("c")).messages) == [
        ("sales_summary", {"period": "this_week"})
    ]
    result = await assistant.registry.call(
        assistant.agent, "sales_summary", {"period": "this_week"}, ARJUN
    )
    ranked = sorted(result.rows, key=lambda row: -int(row["net_minor"]))
    assert reply.text.startswith(f"{ranked[0]['branch']} sold the most: net {ranked[0]['net']}")
    places = [reply.text.index(f"• {row['branch']}") for row in ranked]
    assert places == sorted(places)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "what's our best selling item?",
            ["I can't tell which items sell best", "sales this week"],
        ),
        ("cancel order 12", ["I can't cancel orders; I can refund order 12", '"refund order 12"']),
    ],
)
async def test_what_nothing_can_do_is_said_with_the_nearest_thing(
    assistant: Assistant, text: str, words: list[str]
) -> None:
    """Best sellers (orders record no items) and cancelling an order (no tool does) are said
    to be out of reach, with what can be done instead; both got "I didn't catch that"."""
    reply = await assistant.reply(conversation="c", caller=ARJUN, text=text)
    assert tool_calls((await assistant.store.load("c")).messages) == []
    for word in words:
        assert word in reply.text
    assert reply.proposals == []


async def test_order_phrasing_names_the_customer(assistant: Assistant) -> None:
    """ "show order <id>" shows the order's customer and total as the tool gave them."""
    reply = await assistant.reply(conversation="c", caller=ARJUN, text="show order 5")
    result = await assistant.registry.call(assistant.agent, "get_order", {"order_id": 5}, ARJUN)
    row = result.rows[0]
    assert str(row["customer"]) in reply.text
    assert str(row["total"]) in reply.text


async def test_a_time_in_an_answer_is_written_by_the_one_formatter(assistant: Assistant) -> None:
    """ "show order 5" says when it was placed as every other time is written ("2026-11-30
    02:08 UTC", which each surface shows in its reader's or the merchant's zone), not the
    offline model's own "30 Nov 2026, 02:08 UTC"."""
    reply = await assistant.reply(conversation="c", caller=ARJUN, text="show order 5")
    result = await assistant.registry.call(assistant.agent, "get_order", {"order_id": 5}, ARJUN)
    placed = datetime.fromisoformat(str(result.rows[0]["created_at"]))
    assert time_stamp(placed) in reply.text, reply.text


async def test_reject_without_a_reason_asks_for_one(assistant: Assistant) -> None:
    """ "reject request 2" with no reason asks for one instead of calling the tool."""
    reply = await assistant.reply(conversation="c", caller=ARJUN, text="reject request 2")
    assert tool_calls((await assistant.store.load("c")).messages) == []
    assert "because" in reply.text
    assert reply.proposals == []


async def test_a_tool_the_agent_lacks_is_explained(
    db: Database, registry: Registry, settings: Settings, recorder: Recorder
) -> None:
    """A read-only agent asked to approve says it cannot, and calls nothing."""
    assistant = Assistant(registry, db, settings, agent=READ_ONLY_AGENT, model=recorder.model())
    reply = await assistant.reply(conversation="c", caller=ARJUN, text="approve request 3")
    assert "not available" in reply.text
    assert reply.proposals == []
    assert tool_calls((await assistant.store.load("c")).messages) == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("<@U0123ABC> approve request 3!", "approve request 3"),
        ("<@U1> <@U2>,  show   order 7 ?", "show order 7"),
        ("@countersign: branches.", "branches"),
        ("[from Arjun Mehta, manager] <@U1> stock at MG Road?", "stock at MG Road"),
    ],
)
def test_mentions_tags_and_punctuation_are_ignored(text: str, said: str) -> None:
    """Leading @mentions, the speaker tag, doubled spaces and edge punctuation do not matter."""
    assert normalise(text) == said


@pytest.mark.parametrize(
    ("text", "call"),
    [
        ("REFUND ORDER #12 ₹1,250.50", ("refund_order", {"order_id": 12, "amount": "1,250.50"})),
        (
            "refund order 12 because cold food",
            ("refund_order", {"order_id": 12, "reason": "cold food"}),
        ),
        (
            "sales today at Whitefield",
            ("sales_summary", {"period": "today", "branch": "Whitefield"}),
        ),
        (
            "approve request 4 note: fine once",
            ("approve_request", {"request_id": 4, "note": "fine once"}),
        ),
        (
            "set the price for Masala Dosa to 99.5",
            ("set_price", {"sku": "Masala Dosa", "price": "99.5"}),
        ),
    ],
)
def test_variants_of_the_phrasings(text: str, call: tuple[str, dict[str, Any]]) -> None:
    """Amounts with symbols and commas, optional reasons, notes and periods reach the arguments."""
    assert understand(text) == call


async def test_a_proposal_is_said_in_one_short_line(assistant: Assistant) -> None:
    """The reply above a card is one line: the card below carries the details, the expiry and
    the buttons; a 9-line repeat of every field pushed the card off a phone's first screen."""
    reply = await assistant.reply(conversation="t", caller=ARJUN, text="approve request 3")
    assert len(reply.proposals) == 1
    assert "\n" not in reply.text
    assert len(reply.text) <= 80
    assert reply.text.startswith("Not done yet")
    assert "expires" not in reply.text  # the card shows its expiry once, in each reader's zone
    for detail in reply.proposals[0].details:
        assert f"{detail.label}:" not in reply.text


async def test_several_requests_are_one_call_each_in_one_turn(assistant: Assistant) -> None:
    """ "approve requests 1, 2 and 3" calls approve_request once per request, in that order,
    in one turn: three proposals the core shows as one card."""
    reply = await assistant.reply(
        conversation="c", caller=ARJUN, text="approve requests 1, 2 and 3"
    )
    stored = await assistant.store.load("c")
    assert tool_calls(stored.messages) == [
        ("approve_request", {"request_id": n}) for n in (1, 2, 3)
    ]
    assert [p.summary.split(" — ")[0] for p in reply.proposals] == [
        f"Approve request {n}" for n in (1, 2, 3)
    ]


async def test_a_staff_batch_is_one_card_and_told_as_one(assistant: Assistant) -> None:
    """Ravi's "approve requests 4, 5 and 6" is one card, told in one line: whom it went to as
    its strictest change needs (two managers, both named with "and"). It was told both "went
    to Arjun Mehta or Meera Iyer" and "went to Arjun Mehta and Meera Iyer… It needs 2
    approvals"."""
    reply = await assistant.reply(conversation="c", caller=RAVI, text="approve requests 4, 5 and 6")
    assert len(reply.proposals) == 3
    assert reply.text.count("Not done yet") == 1
    assert "It needs 2 approvals from different people." in reply.text
    assert " or " not in reply.text


async def test_rejecting_several_requests_takes_one_reason_for_all(assistant: Assistant) -> None:
    """ "reject requests 4 and 6 because …" rejects each with that reason; without a reason
    it asks for one and calls nothing."""
    asked = await assistant.reply(conversation="a", caller=ARJUN, text="reject requests 4 and 6")
    assert "because" in asked.text and asked.proposals == []
    await assistant.reply(
        conversation="c", caller=ARJUN, text="reject requests 4 and 6 because over budget"
    )
    assert tool_calls((await assistant.store.load("c")).messages) == [
        ("reject_request", {"request_id": n, "reason": "over budget"}) for n in (4, 6)
    ]


def test_one_request_still_reads_as_one() -> None:
    """The plural phrasing leaves "approve request 3" and "approve #3" a single call."""
    assert understand("approve request 3") == ("approve_request", {"request_id": 3})
    assert understand("approve requests 1 & 2") == [
        ("approve_request", {"request_id": 1}),
        ("approve_request", {"request_id": 2}),
    ]


_DIGITS = "9" * 5000


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("approve request 99999999999999999999", "must be at most 2,147,483,647"),
        ("refund order 5 " + "9" * 400, "The amount must be at most"),
        (f"approve request {_DIGITS}", "The request number is too large"),
        (f"approve requests 2147483648 and {_DIGITS}", "The request number is too large"),
        (f"reject request {_DIGITS} because no", "The request number is too large"),
        (f"show request {_DIGITS}", "The request number is too large"),
        (f"show order {_DIGITS}", "The order number is too large"),
        (f"refund order {_DIGITS}", "The order number is too large"),
    ],
    ids=lambda v: v[:30],
)
async def test_numbers_too_large_are_answered_in_words(
    assistant: Assistant, text: str, said: str
) -> None:
    """A number beyond what its field holds is answered with the reason and nothing proposed.
    One of more than 4,300 digits, which int() refuses, used to end the turn in a traceback;
    it reaches the tool as typed, and the schema says it is too large."""
    reply = await assistant.reply(conversation="c", caller=ARJUN, text=text)
    assert said in reply.text
    assert reply.proposals == []
