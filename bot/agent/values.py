"""How one value and one field name read in a reply, and how many rows fit one; never cuts a value.

Shared by the words for our own tools' results (``phrasing``) and for a merchant's servers'
(``answers``), so a time or a yes reads the same in both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from tools import time_stamp

__all__ = ["ANSWER_CHARS", "MAX_ROWS", "fitting", "label", "moment", "plural", "scalar"]

MAX_ROWS = 12
# What one answer holds: under the 4,000 characters a Teams message is clipped to, so a row is
# never cut by the surface either (Slack splits a long one; Teams cuts it).
ANSWER_CHARS = 3_500


def fitting(head: str, lines: list[str], *, most: int = 0) -> list[str]:
    """The first of ``lines`` (``most`` at most, when given) that fit one answer under ``head``,
    leaving room for a line saying how many were left out; the first line always, whole."""
    room = ANSWER_CHARS - len(head) - 300
    kept: list[str] = []
    for line in lines[: most or None]:
        room -= len(line) + 1
        if kept and room < 0:
            break
        kept.append(line)
    return kept


def label(key: str) -> str:
    """A field name as words: "supplier_id" is "Supplier id"."""
    return str(key).replace("_", " ").capitalize()


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one}" if n == 1 else f"{n} {many}"


def scalar(value: Any, nested: Callable[[Mapping[str, Any]], str]) -> str:
    """One value as a person reads it: "" for nothing, yes/no, a time in words; ``nested`` says
    a row inside it, and a list is its items'."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return nested(value)
    if isinstance(value, list | tuple):
        return "; ".join(said for item in value if (said := scalar(item, nested)))
    when = moment(value) if isinstance(value, str) else None
    return when or str(value)


def moment(stamp: str) -> str | None:
    """An ISO timestamp as people read it ("2026-03-01 10:05 UTC", which each surface shows in
    its reader's zone or the merchant's), or None if it is not one."""
    if not _ISO.fullmatch(stamp):
        return None
    try:
        at = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return time_stamp(at if at.tzinfo is not None else at.replace(tzinfo=UTC))


_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?")
