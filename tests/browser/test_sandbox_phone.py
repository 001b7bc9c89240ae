"""The sandbox on a 390 px phone: the question and the card's Approve on one screen, no scrolling;
a manager's DM copy found from the menu's unread count."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import BrowserContext, Locator, expect

from tests.browser.conftest import SHOTS, Alone, Running, open_as, settled
from tests.browser.test_sandbox_dms import send_copy
from tests.browser.test_sandbox_flows import switch
from tests.browser.test_sandbox_routing import approve, dm_copy, ravi_asks, side

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
    assert "\n" not in (await reply.locator(".bk-rich").inner_text()).strip()
    await settled(page)  # the new card's highlight faded, for the picture
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


async def test_on_a_phone_the_menu_counts_the_dm_copy_and_approve_fits(
    alone: Alone, browser: BrowserContext
) -> None:
    """At 390 × 844 the folded sidebar's unread count sits on the menu button; the DM it leads
    to shows the card with a full-size Approve on the first screen, and no sideways scroll."""
    await send_copy(alone, "UMEERA", "Approval needed")
    page = await open_as(browser, alone.url, "UMEERA")
    await page.set_viewport_size(PHONE)
    menu = page.locator("#menu")
    await expect(menu).to_have_attribute("data-unread", "1")
    await expect(menu).to_have_attribute("aria-label", "Channels and direct messages, 1 unread")
    await _on_screen(menu)
    await expect(page.locator(".sidebar")).not_to_be_in_viewport()  # folded away at this width
    await page.screenshot(path=SHOTS / "12-phone-dm-unread.png")
    await menu.click()
    dm = page.locator("#dm-list .side-item")
    await expect(dm.locator(".unread")).to_have_text("1")
    await expect(dm).to_be_in_viewport(ratio=1)  # once the sidebar has slid in
    await _on_screen(dm)
    await dm.click()
    await expect(page.locator(".sidebar")).not_to_be_in_viewport()
    await expect(menu).not_to_have_attribute("data-unread", "1")
    approve = page.locator("#messages .bk-button.primary", has_text="Approve")
    await expect(approve).to_be_in_viewport()
    box = await _on_screen(approve)
    assert box["height"] >= 44, box
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    await page.screenshot(path=SHOTS / "13-phone-dm-card.png")


async def test_on_a_phone_a_manager_approves_the_copy_of_ravis_card_from_her_dm(
    sandbox: Running, browser: BrowserContext
) -> None:
    """At 390 × 844 Meera reaches Ravi's routed card from the menu's count, its Approve is full
    size within the screen, and approving there shows it done, all without sideways scrolling."""
    page = await open_as(browser, sandbox.url, "URAVI")
    await page.set_viewport_size(PHONE)
    # Meera is looking at the channel (a test before may have left her in her DM, where a
    # new copy counts as read), so the copy can only reach her as unread in the menu.
    await switch(page, "UMEERA")
    await side(page, "#channel-list .side-item")
    await switch(page, "URAVI")
    await ravi_asks(page, "@countersign approve request 2")
    await switch(page, "UMEERA")
    menu = page.locator("#menu")
    await expect(menu).to_have_attribute("data-unread", re.compile(r"^[1-9][0-9]*$"))
    copy = await dm_copy(page, 2)
    approve_button = copy.locator(".bk-button.primary", has_text="Approve")
    await approve_button.scroll_into_view_if_needed()
    await expect(approve_button).to_be_in_viewport(ratio=1)
    box = await _on_screen(approve_button)
    assert box["height"] >= 44 and box["width"] >= 88, box
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    await settled(page)
    await page.screenshot(path=SHOTS / "18-phone-routed-copy.png")
    await approve(page, copy)
    await expect(copy.locator(".bk-header", has_text="Approved and done")).to_be_visible()
    await expect(copy.locator(".bk-button")).to_have_count(0)
    assert sandbox.request_status(2) == "approved"
