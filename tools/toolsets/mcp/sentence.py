"""Writes an MCP write's card sentence from the owner's template and the arguments; never sends anything.

The owner writes a sentence per tool (``countersign mcp add … --sentence 'record_payment=Pay
{amount} to {supplier_id}, reference {reference}'``): it is the card's first line, the channel's
audit line and what the model reads of the card. A placeholder is an argument's name and nothing
else: never ``str.format``, whose ``{amount.__class__}`` would reach into the value, and never a
format spec, which could round a value the card then shows differently from what is sent.
Every value put in is one line, its hidden characters marked (``tools.cards.visible.marked``), as on
every other line of a card.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from babel.numbers import format_currency, get_currency_precision

from tools.cards.visible import marked

__all__ = ["as_money", "fill", "placeholders", "targets_line", "unknown"]

_MAX_VALUE = 200  # one value in the sentence; the card's arguments show it whole


def placeholders(template: str) -> tuple[str, ...]:
    """The argument names ``template`` puts in, in order.

    Raises:
        ValueError: a brace left open or closed alone, an empty ``{}``, or a placeholder that
            is more than an argument's name (``{a.b}``, ``{a[0]}``, ``{a!r}``, ``{a:.2f}``).
    """
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as bad:
        raise ValueError(f"{bad} in {template!r}; write {{{{ and }}}} for a brace") from None
    names: list[str] = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            shown = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            raise ValueError(
                f"{{{shown}}} is not an argument's name; a placeholder is the name alone, "
                "like {amount}"
            )
        names.append(name)
    return tuple(names)


def unknown(template: str, schema: Mapping[str, Any] | None) -> list[str]:
    """The placeholders of ``template`` that the tool's input schema does not take."""
    properties = (schema or {}).get("properties")
    taken = set(properties) if isinstance(properties, dict) else set()
    return sorted({name for name in placeholders(template) if name not in taken})


def fill(template: str, values: Mapping[str, Any], money: Callable[[str, Any], str | None]) -> str:
    """``template`` with each placeholder replaced by its argument's value, one line, marked;
    ``money(name, value)`` says it as money where that argument is the amount."""
    out: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is not None:
            out.append(_said(name, values, money))
    return "".join(out).strip()


def _said(name: str, values: Mapping[str, Any], money: Callable[[str, Any], str | None]) -> str:
    if name not in values or values[name] is None:
        return "(not given)"
    value = values[name]
    text = money(name, value) or (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    )
    text = text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"
    return marked(text)


def as_money(value: Any, unit: Literal["major", "minor"], currency: str, locale: str) -> str | None:
    """An amount argument as money ("₹7,800.50"), or None when it is not a number.

    Never rounded: 7800.505 reads "₹7,800.505", since that is what is sent.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    if not amount.is_finite():
        return None
    if unit == "minor":
        amount = amount.scaleb(-int(get_currency_precision(currency)))
    return str(format_currency(amount, currency, locale=locale, decimal_quantization=False))


def targets_line(
    title: str,
    keys: Iterable[str],
    values: Mapping[str, Any],
    money: Callable[[str, Any], str | None],
) -> str:
    """The title sentence, followed by the values of the arguments naming what it changes:
    "Void an invoice on the ledger server: invoice_id INV-1008."."""
    named = "; ".join(f"{key} {_said(key, values, money)}" for key in keys)
    return f"{title}: {named}." if named else f"{title}."
