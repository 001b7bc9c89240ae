"""manifest.yml against the code: the scopes the app asks for, the events it answers, its assistant view."""

from __future__ import annotations

import re
from pathlib import Path

from bot.slack.app import BOT_SCOPES

MANIFEST = Path(__file__).resolve().parents[2] / "manifest.yml"


def _section(path: tuple[str, ...]) -> list[str]:
    """The lines under a nested key of the manifest (two spaces per level), without comments."""
    lines = [
        line for line in MANIFEST.read_text().splitlines() if not line.lstrip().startswith("#")
    ]
    start, depth = 0, 0
    for key in path:
        pattern = re.compile(rf"^{' ' * depth}{re.escape(key)}:\s*$")
        start = next(i for i in range(start, len(lines)) if pattern.match(lines[i])) + 1
        depth += 2
    section: list[str] = []
    for line in lines[start:]:
        if line.strip() and len(line) - len(line.lstrip()) < depth:
            break
        section.append(line)
    return section


def _items(path: tuple[str, ...]) -> list[str]:
    return [line.strip()[2:] for line in _section(path) if line.strip().startswith("- ")]


def test_manifest_asks_for_exactly_the_scopes_the_code_uses() -> None:
    """The bot scopes in manifest.yml are BOT_SCOPES (the OAuth install asks for the same)."""
    assert sorted(_items(("oauth_config", "scopes", "bot"))) == sorted(BOT_SCOPES)
    assert "assistant:write" in BOT_SCOPES


def test_manifest_turns_on_the_assistant_view_and_its_events() -> None:
    """The app appears in Slack's AI split view: a description, prompts and the thread events."""
    view = "\n".join(_section(("features", "assistant_view")))
    assert re.search(r"assistant_description: \S", view)
    prompts = re.findall(r"- title: (.+)\n\s+message: (.+)", view)
    assert ("What's waiting for me?", "What's waiting for me?") in prompts
    events = _items(("settings", "event_subscriptions", "bot_events"))
    assert {"assistant_thread_started", "assistant_thread_context_changed"} <= set(events)
    assert {"app_mention", "message.im", "message.channels"} <= set(events)
