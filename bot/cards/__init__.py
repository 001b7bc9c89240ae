"""One description of an approval card for every surface; never renders or posts one.

``bot.cards.spec`` builds a ``CardSpec`` from a proposal or a stored card, and
``bot.cards.wording`` holds the words it uses. Slack renders it as Block Kit
(``bot.slack.blocks``), Teams as an Adaptive Card (``bot.teams.cards``).
"""

from bot.cards.spec import (
    LIMITS,
    CardAction,
    CardSpec,
    Decided,
    Limits,
    clip,
    decided,
    of_proposal,
    of_record,
    pending,
)

__all__ = [
    "LIMITS",
    "CardAction",
    "CardSpec",
    "Decided",
    "Limits",
    "clip",
    "decided",
    "of_proposal",
    "of_record",
    "pending",
]
