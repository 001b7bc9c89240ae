"""The write toolset as other code sees it: names, arguments, roles, and what the model is told."""

from __future__ import annotations

from typing import Any

import pytest

from tests.merchant.writes_support import PRIYA, make_registry, propose
from tools.caller import Role
from tools.db import Database
from tools.errors import InvalidArgumentsError
from tools.schema import MAX_MINOR
from tools.tool import Scope, Tool
from tools.toolsets.merchant import DEFAULT_AGENT, READ_TOOLS, WRITE_TOOLS
from tools.toolsets.merchant.money import parse_money

_CONTRACT = {
    "approve_request": ({"request_id", "note"}, Role.MANAGER),
    "reject_request": ({"request_id", "reason"}, Role.MANAGER),
    "close_branch": ({"branch"}, Role.OWNER),
    "reopen_branch": ({"branch"}, Role.OWNER),
    "refund_order": ({"order_id", "amount", "reason"}, Role.MANAGER),
    "adjust_stock": ({"branch", "sku", "delta", "reason"}, Role.MANAGER),
    "set_price": ({"sku", "price"}, Role.OWNER),
}


def test_write_tools_keep_their_names_arguments_and_roles() -> None:
    """The seven writes keep the names, arguments and roles the surfaces are coded against."""
    found = {t.name: (set(t.args.model_fields), t.role) for t in WRITE_TOOLS}
    assert found == _CONTRACT


def test_every_write_is_built_as_a_write() -> None:
    """Each write tool has the write scope and both halves, so a call can only propose."""
    for tool in WRITE_TOOLS:
        assert tool.scope is Scope.WRITE
        assert tool.propose is not None
        assert tool.execute is not None


def test_the_model_is_told_a_call_only_proposes() -> None:
    """Every description says the call only proposes, and every argument is described."""
    for tool in WRITE_TOOLS:
        assert "nothing changes until it is approved" in tool.description
        schema = tool.args.model_json_schema()
        for name, field in schema["properties"].items():
            assert field.get("description"), f"{tool.name}.{name} has no description"


def _unbounded(node: dict[str, Any]) -> bool:
    """Whether a property's schema lets a number through without an upper bound."""
    options = node.get("anyOf", [node])
    return any(
        option.get("type") in ("integer", "number") and "maximum" not in option
        for option in options
    )


@pytest.mark.parametrize("tool", [*WRITE_TOOLS, *READ_TOOLS], ids=lambda t: t.name)
def test_every_number_a_tool_takes_is_bounded(tool: Tool) -> None:
    """Every number argument has an upper bound in its schema, so a number beyond what the
    database column holds is refused with the bound in words; before, "approve request
    99999999999999999999" reached the database and ended the turn in a traceback."""
    properties = tool.args.model_json_schema()["properties"]
    assert [name for name, node in properties.items() if _unbounded(node)] == []


_DOSA = "FF-MASALA-DOSA"
_HUGE = "9" * 400
TOO_LARGE = [
    ("approve_request", {"request_id": 2**31}, "The request number must be at most 2,147,483,647"),
    ("approve_request", {"request_id": 10**20}, "The request number must be at most"),
    ("reject_request", {"request_id": 10**20, "reason": "no"}, "The request number must be at"),
    ("refund_order", {"order_id": 2**31}, "The order number must be at most 2,147,483,647"),
    ("refund_order", {"order_id": 5, "amount": _HUGE}, "The amount must be at most"),
    ("refund_order", {"order_id": 5, "amount": "1e400"}, "The amount must be at most"),
    ("refund_order", {"order_id": 5, "amount": "Infinity"}, "The amount is not valid"),
    ("set_price", {"sku": _DOSA, "price": "99999999999999999999"}, "The price must be at most"),
    ("set_price", {"sku": _DOSA, "price": _HUGE}, "The price must be at most"),
    ("close_branch", {"branch": 10**20}, "The branch must be at most 2,147,483,647"),
    ("adjust_stock", {"branch": 2**31, "sku": _DOSA, "delta": 1, "reason": "x"}, "The branch"),
]


@pytest.mark.parametrize(("tool", "args", "said"), TOO_LARGE, ids=lambda v: str(v)[:40])
async def test_numbers_too_large_to_store_are_refused_at_proposal(
    db: Database, tool: str, args: dict[str, Any], said: str
) -> None:
    """An id, amount or price beyond what its column holds (or than money formatting can show)
    is refused by the schema, in words, on both databases: before, it overflowed in SQLite's
    driver, PostgreSQL refused it with a driver error, or babel could not format it."""
    with pytest.raises(InvalidArgumentsError) as refused:
        await propose(make_registry(db), tool, args, PRIYA)
    assert said in str(refused.value)
    assert "constrained" not in str(refused.value) and "str is" not in str(refused.value)


UNSTORABLE = [
    ("adjust_stock", {"branch": 1, "sku": "FF-\x00", "delta": 1, "reason": "x"}, "SKU"),
    ("refund_order", {"order_id": 5, "amount": "1", "reason": "cold\x00"}, "reason"),
    ("approve_request", {"request_id": 1, "note": "ok \ud800"}, "note"),
    ("list_requests", {"branch": "Indira\x00nagar"}, "branch"),
]


@pytest.mark.parametrize(("tool", "args", "field"), UNSTORABLE, ids=lambda v: str(v)[:40])
async def test_text_no_column_can_hold_is_refused_in_words(
    db: Database, tool: str, args: dict[str, Any], field: str
) -> None:
    """A NUL or a lone surrogate in any text argument is refused by the schema, naming the
    field: before, PostgreSQL's driver refused the NUL in a SKU and the turn crashed."""
    with pytest.raises(InvalidArgumentsError) as refused:
        await make_registry(db).call(DEFAULT_AGENT, tool, args, PRIYA)
    assert f"The {field} is not valid: it contains a character that cannot be stored" in str(
        refused.value
    )


@pytest.mark.parametrize("amount", ["1e30", "92233720368547758.08", "9" * 400])
def test_money_beyond_a_bigint_column_is_not_read(amount: str) -> None:
    """An amount whose minor units a money column cannot hold is refused where it is read (the
    policy's two-approver threshold at the command line goes through here, not a schema)."""
    with pytest.raises(ValueError, match="too large an amount"):
        parse_money(amount, "INR")
    assert parse_money("92233720368547758.07", "INR") == MAX_MINOR
