"""A batch card in the sandbox, in a real browser at phone width: readable, one Approve all."""

from __future__ import annotations

import pytest
from playwright.async_api import BrowserContext, expect

from tests.browser.conftest import SHOTS, Running, confirm_approve, open_as, settled

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


async def test_on_a_phone_approve_all_runs_each_request(
    sandbox: Running, browser: BrowserContext
) -> None:
    """At 390 × 844, "approve requests 1, 2 and 3" shows one card listing the three with one
    Approve all 3; its confirm names what runs; approving shows each done, without any
    sideways scroll."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await page.set_viewport_size(PHONE)
    await page.fill("#composer-text", "@countersign approve requests 1, 2 and 3")
    await page.press("#composer-text", "Enter")
    heading = page.locator(".bk-header", has_text="Approval needed from Arjun Mehta")
    card = page.locator("#thread .message", has=heading)
    await expect(card).to_be_visible()
    for number in (1, 2, 3):
        await expect(card).to_contain_text(f"Approve request {number} — ")
    approve = card.locator(".bk-button.primary", has_text="Approve all 3")
    await expect(approve).to_have_count(1)
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    await settled(page)
    await page.screenshot(path=SHOTS / "30-phone-batch-card.png", full_page=True)
    await approve.click()
    await confirm_approve(page, "Approve all 3 changes?")
    await expect(page.locator("#thread .bk-header", has_text="Approved and done")).to_be_visible()
    await expect(card.locator(".bk-button")).to_have_count(0)
    assert [sandbox.request_status(n) for n in (1, 2, 3)] == ["approved"] * 3
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    await settled(page)
    await page.screenshot(path=SHOTS / "31-phone-batch-done.png", full_page=True)
