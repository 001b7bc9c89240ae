"""The write toolset as other code sees it: names, arguments, roles, and what the model is told."""

from __future__ import annotations

from tools.caller import Role
from tools.merchant import WRITE_TOOLS
from tools.tool import Scope

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
