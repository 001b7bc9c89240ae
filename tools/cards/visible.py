"""Marks the characters of a text that do not show, and measures what a card may hold; never changes what is sent.

A card is the only thing a person checks before a write runs, so a character they cannot see is
one they did not agree to. ``"SUP-\u200b001\u202e"`` looked like ``SUP-001`` on a card while the
server was sent a zero-width space and a right-to-left override (Trojan Source). Every card,
its copies and the channel's audit line show such a character as its code point instead
(``SUP-⟦U+200B⟧001⟦U+202E⟧``) and say so in a line of their own; the arguments themselves are
sent as they were given.

What counts: the Unicode categories that draw nothing of their own (controls Cc, formats Cf
such as bidi controls, zero-width characters and the soft hyphen, line and paragraph separators
Zl/Zp, private use Co, unassigned Cn, surrogates Cs), spaces other than the plain one (Zs: a
no-break space looks like a space and is sent as something else), and a few letters and marks
that are blank by design (Hangul fillers, the combining grapheme joiner, the braille blank).
A line break and a tab in a multi-line value (a memo, a file's content) are kept as they are when
``lines`` is set: marked, a file would read as one line of marks; kept, they read as what they
are. Everywhere else (a name, a heading) they are marked too.

The sizes here are the most one card shows on every surface (``fitting``): whole values or no
card, since a value cut with Approve still offered sends what nobody saw.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Final

__all__ = [
    "CARD_CHARS",
    "DETAILS",
    "LABEL_CHARS",
    "MARKED",
    "VALUE_CHARS",
    "hides",
    "marked",
    "one_line",
    "too_long",
]

MARKED: Final = "This card holds characters that do not show; they are marked."

# Slack: a rich_text line of a label and its value stays inside one 3,000-character block;
# a message's blocks are refused (msg_blocks_too_long) past about 13,000 characters in all.
# Teams: a card of 80 details of this size, markup included, stays under its 28 KB.
VALUE_CHARS: Final = 2_000
LABEL_CHARS: Final = 100
CARD_CHARS: Final = 8_000
DETAILS: Final = 80

_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs", "Zs"})
_BLANK: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
_KEPT_IN_LINES: Final = frozenset("\n\t")
_OPEN: Final = "⟦U+"


def _hidden(char: str) -> bool:
    if char == " ":
        return False
    return char in _BLANK or unicodedata.category(char) in _HIDDEN_CATEGORIES


def marked(text: str, *, lines: bool = False) -> str:
    """``text`` with each character that does not show written as its code point (⟦U+200B⟧).

    ``lines``: a line break or a tab is kept as it is (a multi-line value stays readable).
    """
    # str.isprintable is false exactly for the categories above and true for the plain
    # space; checked in C, it spares the character-by-character walk for the texts nearly
    # every card holds, which have nothing to mark.
    if text.isprintable() and _BLANK.isdisjoint(text):
        return text
    if not any(_hidden(char) for char in text):
        return text
    return "".join(
        char
        if not _hidden(char) or (lines and char in _KEPT_IN_LINES)
        else f"{_OPEN}{ord(char):04X}⟧"
        for char in text
    )


def hides(texts: Iterable[str | None], *, lines: bool = False) -> bool:
    """Whether any of ``texts`` holds a character ``marked`` would mark, or a mark already
    (a name is stored marked, ``one_line``)."""
    return any(text and (_OPEN in text or marked(text, lines=lines) != text) for text in texts)


def one_line(text: str, limit: int) -> str:
    """A name from outside (an agent's, a tool's title) as one line of at most ``limit``
    characters, its hidden characters marked: what is stored is what a card shows."""
    flat = marked(" ".join(text.split()))
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if cut.rfind("⟦") > cut.rfind("⟧"):
        cut = cut[: cut.rfind("⟦")]  # half a mark would read as some other character
    return cut.rstrip() + "…"


def too_long(details: Iterable[tuple[str, str]]) -> str | None:
    """Why these details cannot all be shown whole on one card, or None when they can.

    Counted as shown (hidden characters marked), so a value of zero-width spaces is as long as
    the marks a person reads.
    """
    shown = [(marked(label), marked(value, lines=True)) for label, value in details]
    for label, value in shown:
        if len(label) > LABEL_CHARS:
            return f"an argument's name is {len(label):,} characters, the most is {LABEL_CHARS:,}"
        if len(value) > VALUE_CHARS:
            return f"{len(value):,} characters in {label}, the most is {VALUE_CHARS:,}"
    if len(shown) > DETAILS:
        return f"{len(shown):,} details, the most is {DETAILS:,}"
    total = sum(len(label) + len(value) for label, value in shown)
    if total > CARD_CHARS:
        return f"{total:,} characters in all, the most is {CARD_CHARS:,}"
    return None
