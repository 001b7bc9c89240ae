"""The feedback buttons under the model's answers (Block Kit ``context_actions`` holding
``feedback_buttons``); never on a card, never calls Slack.

A card's buttons are its decision, so a card never gets these: only an answer's message does,
posted whole (``bot.slack.adapter``) or streamed (``stopStream``'s blocks). The buttons carry
only the rating; the presser, the answer and its conversation come from the signed press.
"""

from __future__ import annotations

import uuid
from typing import Final

from bot.slack import texts
from bot.slack.blocks import Block, plain

__all__ = ["BAD", "FEEDBACK_ACTION", "GOOD", "feedback_block"]

FEEDBACK_ACTION: Final = "answer_feedback"
GOOD: Final = "good"
BAD: Final = "bad"
_LABEL = 75  # Slack's limit for a feedback button's text and accessibility label


def feedback_block() -> Block:
    """Thumbs up and down for one answer; a fresh block id each time, as Slack asks."""
    words = texts.assistant
    return {
        "type": "context_actions",
        "block_id": f"feedback-{uuid.uuid4().hex[:8]}",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": FEEDBACK_ACTION,
                "positive_button": {
                    "text": plain(words.FEEDBACK_GOOD, _LABEL),
                    "accessibility_label": words.FEEDBACK_GOOD_LABEL,
                    "value": GOOD,
                },
                "negative_button": {
                    "text": plain(words.FEEDBACK_BAD, _LABEL),
                    "accessibility_label": words.FEEDBACK_BAD_LABEL,
                    "value": BAD,
                },
            }
        ],
    }
