"""The sandbox page draws a card's rich_text and plain_text as typed, as Slack does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import BrowserContext, expect

from bot.cards.cardspec import pending
from bot.slack.cards import render
from tests.browser.conftest import SHOTS, Alone, open_as
from tests.browser.test_sandbox_dms import open_dm

pytestmark = pytest.mark.browser

NOTE = "*urgent* ~later~ `cat` <!channel> & Co :tada: _q4_"


async def test_a_card_shows_ids_paths_and_notes_exactly_as_typed(
    alone: Alone, browser: BrowserContext
) -> None:
    """``supplier_ref: INV_2026_001``, a path and a note full of mrkdwn markup read on the page
    exactly as they would run: no italics, no strike, no code, no @channel pill, no emoji, on
    a 390 px phone too. The card once showed ``INVˍ2026ˍ001``."""
    spec = pending(
        card_id="c1",
        summary="Record supplier_ref INV_2026_001 from /data/notes_q4.txt",
        details=(("supplier_ref", "INV_2026_001"), ("path", "/data/notes_q4.txt"), ("Note", NOTE)),
        warning=None,
        expires_at=datetime.now(UTC) + timedelta(minutes=30),
        token="t" * 40,
        issued_to="Meera Iyer",
    )
    opened = await alone.client.conversations_open(users="UMEERA")
    await alone.client.chat_postMessage(
        channel=opened["channel"]["id"], text="Approval needed", blocks=render(spec, for_user=None)
    )
    page = await open_as(browser, alone.url, "UMEERA")
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.locator("#menu").click()
    await open_dm(page)
    await expect(page.locator(".sidebar")).not_to_be_in_viewport()
    card = page.locator("#messages .message", has=page.locator(".bk-header"))
    rich = card.locator(".bk-rich")
    await expect(rich.first).to_have_text(
        "Record supplier_ref INV_2026_001 from /data/notes_q4.txt"
    )
    shown = "\n".join(await rich.all_inner_texts())
    for typed in ("supplier_ref: INV_2026_001", "path: /data/notes_q4.txt", f"Note: {NOTE}"):
        assert typed in shown, shown
    assert await rich.locator("i, s, code, .broadcast, .mention, .emoji, .emoji-badge").count() == 0
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= 390
    await page.screenshot(path=SHOTS / "20-phone-card-as-typed.png")
