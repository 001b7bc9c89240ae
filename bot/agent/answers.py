"""Words for what a merchant's MCP server answered a read: its own text, else each row whole;
never cuts a row or a line, and never hides a field.

The server knows how its answer reads best. Where it wrote words ("SUP-001 Nandi Dairy
(Bengaluru): owed ₹32,140.50"), those are the answer; where it gave rows alone, each row is one
line with every field, its ids included (the next step, "pay SUP-001", needs them). Money is
already the merchant's by then (``tools.toolsets.mcp.reading``). An answer too long for one message stops
after a whole line and says how many were left out, and how to ask for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.agent.values import MAX_ROWS, fitting, label, plural, scalar

__all__ = ["LEFT_OUT", "from_source", "phrase_answer"]

LEFT_OUT = (
    "…{left} left out of this answer. To see them, ask for fewer at a time: use {tool} with "
    "arguments that narrow it, if it takes any."
)
# The marker the result shaping adds to a text it cut (its scope line says so too).
_CUT = "cut"


def from_source(tool: str) -> bool:
    """Whether a tool is one of a merchant's servers' (``ledger__list_suppliers``)."""
    return "__" in tool


def phrase_answer(tool: str, content: Mapping[str, Any]) -> str:
    """One read's answer: the scope line, then the server's words or its rows."""
    scope = str(content.get("scope", "")).strip()
    words = content.get("text")
    if isinstance(words, str) and words.strip():
        return _lines(tool, scope, words.strip().splitlines(), "line")
    rows = [row for row in content.get("rows", []) if isinstance(row, Mapping)]
    count = max(int(content.get("count", len(rows))), len(rows))
    texts = [text for row in rows if (text := _text(row)) is not None]
    if rows and len(texts) == len(rows):
        return _lines(tool, scope, "\n".join(texts).strip().splitlines(), "line")
    inner = _inner(rows)
    if inner is not None:
        rows, count = inner, len(inner)
    if not rows:
        return "\n".join(part for part in (scope, "Nothing to show.") if part)
    return _rows(tool, scope, rows, count)


def _text(row: Mapping[str, Any]) -> str | None:
    """The text a row is, when it is only text: ``{"text": …}`` (a text part), ``{"result": …}``
    (a tool returning a string), ``{"content": …}`` (a file's contents); else None."""
    fields = [value for key, value in row.items() if key != _CUT]
    return fields[0] if len(fields) == 1 and isinstance(fields[0], str) else None


def _inner(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]] | None:
    """The rows inside a lone row of one list (``{"suppliers": [...]}``), else None."""
    if len(rows) != 1 or len(rows[0]) != 1:
        return None
    [value] = rows[0].values()
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        return list(value)
    return None


def _lines(tool: str, scope: str, lines: list[str], what: str) -> str:
    kept = fitting(scope, lines)
    return _said(tool, scope, kept, len(lines) - len(kept), what)


def _rows(tool: str, scope: str, rows: list[Mapping[str, Any]], count: int) -> str:
    kept = fitting(scope, [f"• {_row(row)}" for row in rows], most=MAX_ROWS)
    return _said(tool, scope, kept, count - len(kept), "row")


def _said(tool: str, scope: str, kept: list[str], left: int, what: str) -> str:
    said = [scope, *kept] if scope else list(kept)
    if left > 0:
        more = plural(left, f"more {what} was", f"more {what}s were")
        said.append(LEFT_OUT.format(left=more, tool=tool))
    return "\n".join(said)


def _row(row: Mapping[str, Any]) -> str:
    """Every field of a row, named, in the server's order: "Supplier id SUP-001, Name …"."""
    return ", ".join(
        f"{label(key)} {said}" for key, value in row.items() if (said := _value(value))
    )


def _value(value: Any) -> str:
    return scalar(value, _row)
