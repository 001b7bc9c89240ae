"""Log lines inside a Slack turn or press carry the context the core binds once."""

from __future__ import annotations

import pytest
import structlog
from structlog.contextvars import merge_contextvars

from tests.slack.conftest import Bot

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


async def test_every_line_of_a_press_carries_tenant_person_and_card(bot: Bot) -> None:
    """Inside a press, every log line (the engine's too) names the tenant, the person and the card."""
    await bot.mention("UARJUN", "approve request 3")
    [card] = bot.cards()
    with structlog.testing.capture_logs(processors=[merge_contextvars]) as logs:
        await bot.press("UARJUN", card)
    inside = [e for e in logs if e.get("platform") == "slack" and "person" in e]
    assert {e["event"] for e in inside} >= {"card_decided", "card_updated", "audit_posted"}
    for entry in inside:
        assert entry["tenant"] == 1 and entry["person"] == 2, entry
        assert entry["card_id"], entry


async def test_every_line_of_a_turn_carries_tenant_and_person(bot: Bot) -> None:
    """Inside a turn, every line after the sender is known names the tenant and the person."""
    with structlog.testing.capture_logs(processors=[merge_contextvars]) as logs:
        await bot.mention("UARJUN", "approve request 3")
    known = [e for e in logs if e.get("platform") == "slack" and "person" in e]
    assert {e["event"] for e in known} >= {"answered", "card_posted"}
    assert all(e["tenant"] == 1 and e["person"] == 2 for e in known), known
