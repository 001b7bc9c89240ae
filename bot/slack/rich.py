"""Builds Block Kit ``rich_text`` lines from words and data; never words anything.

Slack shows a rich_text ``text`` element as typed: no mrkdwn, no tokens, no emoji codes. So
data a person may copy from a card — an id, a SKU, a path, an amount, a name, an argument, a
note or a reason — is placed here, and what they copy is what runs. mrkdwn has no escape for
``* _ ~ `````; the look-alikes that once stood in for them (ˍ ∗ ∼ ˋ) made ``INV_2026_001`` on a
card copy as ``INVˍ2026ˍ001``. A line is a list of elements; ``bot.slack.texts`` words them,
``bot.slack.blocks`` puts them in blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from bot.cards.cardspec import clip
from bot.slack.mrkdwn import WHEN_FORMAT, fallback, stamps
from tools import engine_time

__all__ = [
    "Element",
    "Line",
    "at",
    "bold",
    "emoji",
    "joined",
    "length",
    "line",
    "literal",
    "user",
    "value",
    "words",
]

Element = dict[str, Any]
Line = list[Element]


def at(moment: datetime, *, strong: bool = False) -> Line:
    """A time every reader sees in their own zone, with a UTC fallback for old clients."""
    made: Element = {
        "type": "date",
        "timestamp": int(moment.timestamp()),
        "format": WHEN_FORMAT,
        "fallback": fallback(moment),
    }
    return [{**made, "style": {"bold": True}} if strong else made]


def words(text: str, *, limit: int | None = None, strong: bool = False) -> Line:
    """Text shown as typed (cut to ``limit``), each UTC time in it in the reader's own zone."""
    said = clip(text, limit) if limit is not None else text
    out: Line = []
    for part in stamps(said):
        if isinstance(part, datetime):
            out += at(part, strong=strong)
        elif strong:
            out.append({"type": "text", "text": part, "style": {"bold": True}})
        else:
            out.append({"type": "text", "text": part})
    return out


def literal(text: str, *, strong: bool = False) -> Line:
    """Text exactly as typed: no time in it becomes a date, nothing becomes a mention or link."""
    made: Element = {"type": "text", "text": text}
    return ([{**made, "style": {"bold": True}}] if strong else [made]) if text else []


def value(text: str) -> Line:
    """A card's detail, which a tool will be sent: as typed, unless it is wholly a time the
    engine wrote (``tools.engine_time``), which each reader sees in their own zone."""
    moment = engine_time(text)
    return at(moment) if moment is not None else literal(text)


def bold(text: str, *, limit: int | None = None) -> Line:
    """Text shown as typed, in bold: a label, a card's summary."""
    return words(text, limit=limit, strong=True)


def emoji(name: str) -> Line:
    return [{"type": "emoji", "name": name}]


def user(slack_user: str) -> Line:
    """A mention of a Slack user, shown with their name in each reader's client."""
    return [{"type": "user", "user_id": slack_user}]


def line(*parts: Line | str) -> Line:
    """One line from its parts; a bare string is text shown as typed."""
    out: Line = []
    for part in parts:
        out += words(part) if isinstance(part, str) else part
    return out


def joined(lines: Sequence[Line]) -> Line:
    """Lines one under the other, as one rich_text section's elements."""
    out: Line = []
    for n, each in enumerate(lines):
        if n:
            out.append({"type": "text", "text": "\n"})
        out += each
    return [e for e in out if e.get("type") != "text" or e["text"]]


def length(elements: Sequence[Element]) -> int:
    """About how many characters the elements show (a time counts as its fallback)."""
    return sum(
        len(str(e.get("text") or e.get("fallback") or e.get("name") or "")) for e in elements
    )
