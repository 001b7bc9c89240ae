"""The words of the Edit modal in Slack: its title, its fields, and why an edit was refused."""

from __future__ import annotations

from typing import Final

from bot.cards.wording import field_label
from bot.slack import rich
from bot.slack.rich import Line

__all__ = [
    "EDIT_MODAL_TITLE",
    "EDIT_SUBMIT",
    "NOT_LINKED",
    "editing",
    "field_hint",
    "field_label",
]

EDIT_MODAL_TITLE: Final = "Edit this change"
EDIT_SUBMIT: Final = "Make new card"
NOT_LINKED: Final = "Your Slack account is not linked to a person in this shop, so it cannot edit."


def field_hint(name: str) -> str | None:
    if name == "amount":
        return "For example 200 or 1250.50 (not paise or cents). Leave it empty to refund all that is left."
    return None


def editing(summary: str) -> list[Line]:
    """What the Edit modal says above its fields: the change, as typed, and what editing does."""
    return [
        rich.bold(summary, limit=2000),
        rich.line(
            "Change what you need: a new card is made from live data, and this one is replaced."
        ),
    ]
