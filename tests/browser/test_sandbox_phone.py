"""The sandbox on a 390 px phone: the question and the card's Approve on one screen, no scrolling."""

from __future__ import annotations

import pytest
from playwright.async_api import BrowserContext, Locator, expect

from tests.browser.conftest import SHOTS, Running, open_as

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


async def _on_screen(item: Locator) -> dict[str, float]:
    box = await item.bounding_box()
    assert box is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    assert box["y"] >= 0 and box["y"] + box["height"] <= PHONE["height"], box
    return box


async def test_on_a_phone_the_approve_button_is_on_the_first_screen(
    sandbox: Running, browser: BrowserContext
) -> None:
    """At 390 × 844 the thread shows Arjun's question, a one-line reply, the card headed with
    whom it waits for, and its Approve button, all within the screen without scrolling; the
    reply once repeated every field in 9–11 lines and pushed the card below the fold."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await page.set_viewport_size(PHONE)
    await page.fill("#composer-text", "@countersign approve request 1")
    await page.press("#composer-text", "Enter")
    heading = page.locator(".bk-header", has_text="Approval needed from Arjun Mehta")
    card = page.locator("#thread .message", has=heading)
    await expect(card).to_be_visible()
    approve = card.locator(".bk-button.primary", has_text="Approve")
    await expect(approve).to_be_visible()
    reply = page.locator("#thread .message", has_text="Not done yet")
    await expect(reply).to_have_count(1)
    assert "\n" not in (await reply.locator(".message-text").inner_text()).strip()
    await page.wait_for_timeout(1500)  # let the new card's highlight fade for the picture
    # The first screen: the thread from its top (the question), as a person opening it sees it.
    pane = page.locator("#thread-messages")
    await pane.evaluate("pane => { pane.scrollTop = 0; }")
    shown = await _on_screen(pane)
    top, bottom = shown["y"], shown["y"] + shown["height"]
    question = page.locator("#thread .message", has_text="approve request 1").first
    asked = await _on_screen(question)
    pressed = await _on_screen(approve)
    assert top <= asked["y"] < pressed["y"], (asked, shown)
    assert pressed["y"] + pressed["height"] <= bottom, (pressed, shown)
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    await page.screenshot(path=SHOTS / "10-phone-first-screen.png")
