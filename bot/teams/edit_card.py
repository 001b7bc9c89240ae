"""Renders the Edit form of a Teams card as an Adaptive Card 1.5; never calls Teams, never decides.

Pressing Edit replaces the card, for the presser only (an invoke's answer), with this form: the
card's summary, one input per argument the tool lets a person change, prefilled with the card's
sealed values (a number as ``Input.Number``, anything else as ``Input.Text``), and two buttons.
"Make new card" sends the inputs with the card's signed token; "Cancel" brings the card back.
A value the engine refused comes back in the same form, with what was typed and, right under
its field, why. Like the card itself, data goes only into ``TextRun``s (never read as markdown).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from bot.cards.cardspec import LIMITS, clip
from bot.teams import texts
from bot.teams.adaptive import execute, safe

__all__ = [
    "FIELD_PREFIX",
    "VERB_EDIT_CANCEL",
    "VERB_EDIT_SAVE",
    "EditField",
    "edit_form",
    "typed",
]

Json = dict[str, Any]

VERB_EDIT_SAVE: Final = "edit_save"
VERB_EDIT_CANCEL: Final = "edit_cancel"
# Input ids: ``edit_amount``, ``edit_reason``… (Teams sends them back beside the card's data).
FIELD_PREFIX: Final = "edit_"
_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
_MAX_INPUT = 500


@dataclass(frozen=True, slots=True)
class EditField:
    """One argument on the form: its name, what it holds now (as text), whether it is a number."""

    name: str
    value: str
    numeric: bool = False


def _runs(text: str, *, bold: bool = False) -> Json:
    run: Json = {"type": "TextRun", "text": safe(text)}
    if bold:
        run["weight"] = "Bolder"
    return {"type": "RichTextBlock", "inlines": [run]}


def _number(text: str) -> int | float | None:
    """A typed value as the number ``Input.Number`` holds; None when it is not one."""
    try:
        found = Decimal(text.strip())
    except InvalidOperation:
        return None
    if not found.is_finite():
        return None
    return int(found) if found == found.to_integral_value() else float(found)


def _input(field: EditField) -> Json:
    label = texts.field_label(field.name)
    element: Json = {"id": f"{FIELD_PREFIX}{field.name}", "label": label}
    if field.numeric:
        element["type"] = "Input.Number"
        number = _number(field.value)
        if number is not None:
            element["value"] = number
    else:
        element |= {"type": "Input.Text", "maxLength": _MAX_INPUT, "value": field.value}
    hint = texts.field_hint(field.name)
    if hint:
        element["placeholder"] = hint
    return element


def _problem(error: str) -> Json:
    """Why the engine refused the value, right under its field."""
    said = _runs(clip(error, LIMITS.outcome))
    return {"type": "Container", "style": "attention", "spacing": "Small", "items": [said]}


def edit_form(
    *,
    card_id: str,
    token: str,
    summary: str,
    fields: Sequence[EditField],
    error: str | None = None,
    error_field: str | None = None,
) -> Json:
    """The form for a card's editable values; ``error`` is shown under ``error_field``."""
    body: list[Json] = [
        {"type": "TextBlock", "text": texts.EDIT_TITLE, "wrap": True, "weight": "Bolder"},
        _runs(clip(summary, LIMITS.summary), bold=True),
        {"type": "TextBlock", "text": texts.editing(), "wrap": True, "isSubtle": True},
    ]
    for field in fields:
        body.append(_input(field))
        if error and field.name == error_field:
            body.append(_problem(error))
    actions = [
        execute(card_id, token, VERB_EDIT_SAVE, texts.EDIT_SUBMIT, "positive", "auto"),
        execute(card_id, token, VERB_EDIT_CANCEL, texts.EDIT_CANCEL, "default", "none"),
    ]
    return {
        "type": "AdaptiveCard",
        "$schema": _SCHEMA,
        "version": "1.5",
        "body": body,
        "actions": actions,
    }


def typed(fields: Sequence[str], data: Mapping[str, Any]) -> dict[str, str]:
    """What the person typed in each field, as text (Teams sends inputs beside the data)."""
    out: dict[str, str] = {}
    for name in fields:
        value = data.get(f"{FIELD_PREFIX}{name}")
        out[name] = "" if value is None else str(value).strip()
    return out
