"""The page draws every emoji the app's Slack messages use, instead of showing its :name:."""

from __future__ import annotations

import re
from pathlib import Path

from bot.sandbox.page import STATIC

SLACK = Path(__file__).resolve().parents[2] / "bot" / "slack"
_NAME = re.compile(r"(?<![\w:]):([a-z][a-z0-9_]*):")


def test_every_emoji_the_slack_surface_posts_is_drawn_on_the_page() -> None:
    """A shortcode in bot/slack has a glyph or badge in mrkdwn.js; ':ballot_box_with_check:'
    once showed as those words on every card waiting for its second approval."""
    used = {name for path in SLACK.glob("*.py") for name in _NAME.findall(path.read_text())}
    page = (STATIC / "mrkdwn.js").read_text()
    drawn = set(re.findall(r"\b([a-z0-9_]+|\"\+1\"):\s*[\[\"]", page))
    assert used, "no emoji found in bot/slack: the pattern no longer matches how they are written"
    assert used - drawn == set()
