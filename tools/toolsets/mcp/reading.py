"""Says what an MCP read answered as a person reads it: the server's own words, and its money in
the merchant's; never sends anything and never changes a row but to show its money.

A server may answer with rows (structured content) and with words of its own ("SUP-001 Nandi
Dairy (Bengaluru): owed ₹32,140.50"). The rows reach the model as before; the words go with
them, since they are how the server means its answer to be read. Text that is only the rows'
JSON again (what the SDK writes by default) is not words, and is left out.

A field is money when the tool's output schema says it is in the merchant's currency (its name
ends in the currency's code, ``balance_inr``, or its description names the currency, "in
rupees"), or when the owner's ``--amount`` rule for the tool names it. Each is shown with the
merchant's currency and locale (``format_money``), the way our own tools show money.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from babel.numbers import get_currency_name, get_currency_precision
from mcp.types import CallToolResult, TextContent
from mcp.types import Tool as McpTool

from tools.people.tables import Tenant
from tools.tool import Result, ToolContext
from tools.toolsets.mcp.config import ToolRule
from tools.toolsets.merchant.money import format_money

__all__ = ["WORDS_CHARS", "read_as_said"]

# Words longer than this are left to the rows (which are cut, and say so) rather than sent twice.
WORDS_CHARS = 16_000


async def read_as_said(
    ctx: ToolContext, tool: McpTool, rule: ToolRule, answer: CallToolResult, result: Result
) -> Result:
    """``result`` (the answer's rows) with its money shown as money and the server's words."""
    tenant = await ctx.session.get(Tenant, ctx.caller.tenantid)
    fields = money_fields(tool, rule, tenant.currency) if tenant is not None else {}
    rows = result.rows
    if fields and tenant is not None:
        rows = [_shown(row, fields, tenant) for row in rows]
    return replace(result, rows=rows, text=_words(answer))


def money_fields(tool: McpTool, rule: ToolRule, currency: str) -> dict[str, bool]:
    """The fields of the tool's rows that are money, each with whether it is in minor units."""
    code = currency.lower()
    named = get_currency_name(currency, locale="en").split()[-1].lower()  # "rupee", "dollar"
    said = re.compile(rf"\b(?:{re.escape(code)}|{re.escape(named)}s?)\b", re.IGNORECASE)
    found: dict[str, bool] = {}
    for name, schema in _properties(tool.output_schema or {}):
        numeric = schema.get("type") in ("number", "integer")
        about = f"{schema.get('description', '')} {schema.get('title', '')}"
        if numeric and (name.lower().endswith(f"_{code}") or said.search(about)):
            found[name] = False
    if rule.amount is not None:
        found[rule.amount] = rule.unit == "minor"
    return found


def _properties(schema: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every property anywhere in a schema (its definitions' too), by name."""
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                if isinstance(sub, Mapping):
                    yield str(name), sub
        for value in schema.values():
            yield from _properties(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _properties(item)


def _shown(value: Any, fields: Mapping[str, bool], tenant: Tenant) -> Any:
    if isinstance(value, list):
        return [_shown(item, fields, tenant) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: _money(item, fields[key], tenant) if key in fields else _shown(item, fields, tenant)
        for key, item in value.items()
    }


def _money(value: Any, minor: bool, tenant: Tenant) -> Any:
    """A number as the merchant's money ("₹32,140.50"); anything else as the server sent it."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return value
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return value
    if not amount.is_finite():
        return value
    units = amount if minor else amount.scaleb(get_currency_precision(tenant.currency))
    return format_money(
        int(units.quantize(Decimal(1), ROUND_HALF_UP)), tenant.currency, tenant.locale
    )


def _words(answer: CallToolResult) -> str:
    """The server's own words beside its rows, or "" when it gave none (or only their JSON)."""
    structured = answer.structured_content
    if structured is None:
        return ""  # the text is the rows already
    text = "\n".join(p.text for p in answer.content if isinstance(p, TextContent)).strip()
    # The same text as a field of the rows ({"result": …}, the filesystem's {"content": …}).
    fields = structured.values() if isinstance(structured, dict) else ()
    again = any(isinstance(v, str) and v.strip() == text for v in fields)
    if not text or len(text) > WORDS_CHARS or again:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    return "" if isinstance(data, dict | list) else text
