"""Checks Adaptive Card JSON against the parts of the 1.5 schema the bot uses; fails loudly."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["actions", "texts", "validate"]

Json = dict[str, Any]

_ELEMENTS = {"TextBlock", "RichTextBlock", "Container", "Input.Text", "Input.Number"}
_ACTIONS = {"Action.Execute", "Action.Submit"}
_STYLES = {None, "default", "positive", "destructive"}


def _element(element: Json) -> None:
    kind = element.get("type")
    assert kind in _ELEMENTS, f"unexpected element {kind}"
    if kind == "TextBlock":
        assert isinstance(element["text"], str) and element["text"], element
    elif kind == "RichTextBlock":
        assert element["inlines"], element
        for run in element["inlines"]:
            assert run["type"] == "TextRun" and isinstance(run["text"], str), run
    elif kind == "Container":
        for item in element["items"]:
            _element(item)
    else:
        assert element["id"] and element.get("maxLength", 0) <= 5000, element


def _action(action: Json, *, fallback: bool = True) -> None:
    assert action["type"] in _ACTIONS, action
    assert action.get("style") in _STYLES, action
    assert isinstance(action["data"], dict), action
    if action["type"] == "Action.Execute":
        assert action["verb"], action
        if fallback:
            assert action["fallback"]["type"] == "Action.Submit", action
            _action(action["fallback"], fallback=False)
    else:
        assert action["data"]["verb"], action


def validate(card: Json) -> None:
    """The card is an Adaptive Card 1.5 of known elements and actions, within Teams' size."""
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.5"
    assert card["$schema"].startswith("http://adaptivecards.io/schemas/")
    assert set(card) <= {"type", "version", "$schema", "body", "actions", "refresh"}, set(card)
    assert card["body"], card
    for element in card["body"]:
        _element(element)
    for action in card.get("actions", []):
        _action(action)
    if "refresh" in card:
        assert card["refresh"]["action"]["type"] == "Action.Execute"
        assert card["refresh"]["action"]["verb"] == "refresh"
        assert 1 <= len(card["refresh"]["userIds"]) <= 60
    assert len(json.dumps(card, separators=(",", ":")).encode()) <= 28_000


def texts(card: Json) -> str:
    """Every piece of text on the card, joined: what a reader could see."""
    out: list[str] = []

    def walk(element: Json) -> None:
        if "text" in element:
            out.append(element["text"])
        for run in element.get("inlines", []):
            out.append(run["text"])
        for item in element.get("items", []):
            walk(item)

    for element in card.get("body", []):
        walk(element)
    return "".join(f"{t}\n" if not t.endswith(" ") else t for t in out)


def actions(card: Json) -> list[Json]:
    return list(card.get("actions", []))
