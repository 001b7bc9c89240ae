"""Stopping and starting `make run` again: the page says the bot is gone, then picks up where it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, expect

from tests.browser.conftest import SHOTS, confirm_approve, free_port, launch, open_as
from tests.browser.test_sandbox_flows import ask

pytestmark = [pytest.mark.browser, pytest.mark.slow]


async def test_the_page_shows_the_stop_and_keeps_the_card_across_a_restart(
    tmp_path: Path, browser: BrowserContext
) -> None:
    """A banner appears when countersign stops and goes when it returns; the card is still there and approvable."""
    port = free_port()
    with launch(tmp_path, port) as first:
        page = await open_as(browser, first.url, "UARJUN")
        await ask(page, "@countersign approve request 1")
        await expect(page.locator("#offline")).to_be_hidden()
        # No wait for the debounced save: stopping saves what changed in the last moment.
    await expect(page.locator("#offline")).to_be_visible()
    await expect(page.locator("#offline")).to_contain_text("Countersign has stopped")
    await page.screenshot(path=SHOTS / "10-stopped.png")
    with launch(tmp_path, port) as second:
        await expect(page.locator("#offline")).to_be_hidden(timeout=30_000)
        asked = page.locator("#messages .message", has_text="approve request 1")
        await expect(asked).to_be_visible()
        await asked.locator(".reply-bar").click()
        card = page.locator(
            "#thread .message", has=page.locator(".bk-header", has_text="Approval needed")
        )
        await card.locator(".bk-button.primary", has_text="Approve").click()
        await confirm_approve(page)
        await expect(
            page.locator("#thread .bk-header", has_text="Approved and done")
        ).to_be_visible()
        assert second.request_status(1) == "approved"
