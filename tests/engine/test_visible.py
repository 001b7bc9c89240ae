"""Which characters a card marks as not showing: the rule, for every code point there is."""

from __future__ import annotations

import sys
import unicodedata

from tools.cards.visible import marked

_HIDDEN = {"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs", "Zs"}
_BLANK = "\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0"


def _shows(char: str) -> bool:
    return char == " " or (char not in _BLANK and unicodedata.category(char) not in _HIDDEN)


def test_every_code_point_is_marked_exactly_when_it_does_not_show() -> None:
    """Each character between visible letters is kept when it shows and written as
    its code point when it does not (controls, formats, separators, unassigned, blanks)."""
    wrong = []
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        expected = char if _shows(char) else f"⟦U+{point:04X}⟧"
        if marked(f"a{char}b") != f"a{expected}b":
            wrong.append(f"U+{point:04X}")
    assert wrong == []


def test_a_line_break_and_a_tab_are_kept_only_in_a_multi_line_value() -> None:
    """A memo keeps its line breaks and tabs; a name marks them; other controls are marked in both."""
    assert marked("one\ntwo\tthree", lines=True) == "one\ntwo\tthree"
    assert marked("one\ntwo", lines=False) == "one⟦U+000A⟧two"
    assert marked("a\rb\u200b", lines=True) == "a⟦U+000D⟧b⟦U+200B⟧"
