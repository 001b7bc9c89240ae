"""Dialogs close the way people expect (Escape, the backdrop), and the composer fits a phone."""

from __future__ import annotations

import pytest
from playwright.async_api import BrowserContext, Locator, Page, expect

from tests.browser.conftest import Running, open_as
from tests.browser.test_sandbox_flows import ask

pytestmark = pytest.mark.browser


def card_in_thread(page: Page) -> Locator:
    return page.locator(
        "#thread .message", has=page.locator(".bk-header", has_text="Approval needed")
    )


async def click_backdrop(page: Page, root: str) -> None:
    """Clicks the dimmed backdrop of ``root``, in its top-left corner, away from the dialog."""
    await page.locator(root).click(position={"x": 5, "y": 5})


async def test_escape_and_the_backdrop_close_the_confirm_dialog(
    sandbox: Running, browser: BrowserContext
) -> None:
    """The Approve confirmation (a modal, on a channel's card) closes on Escape and on a
    backdrop click, and nothing is approved."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await ask(page, "@countersign approve request 6")
    approve = card_in_thread(page).locator(".bk-button.primary", has_text="Approve")
    modal = page.locator("#modal-root")
    await approve.click()
    await expect(modal.locator(".dialog-title")).to_have_text("Approve this change?")
    await page.keyboard.press("Escape")
    await expect(modal).to_be_hidden()
    await approve.click()
    await expect(modal.locator(".dialog-title")).to_have_text("Approve this change?")
    await click_backdrop(page, "#modal-root")
    await expect(modal).to_be_hidden()
    await expect(approve).to_be_visible()
    assert sandbox.request_status(6) == "pending"


async def test_escape_and_the_backdrop_close_the_reject_modal(
    sandbox: Running, browser: BrowserContext
) -> None:
    """The Reject modal closes on Escape and on a backdrop click; a click inside it keeps it open."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await ask(page, "@countersign approve request 2")
    reject = card_in_thread(page).locator(".bk-button.danger", has_text="Reject")
    modal = page.locator("#modal-root")
    await reject.click()
    await expect(modal.locator(".dialog-title")).to_have_text("Reject this change")
    await page.keyboard.press("Escape")
    await expect(modal).to_be_hidden()
    await reject.click()
    await expect(modal.locator(".dialog-title")).to_have_text("Reject this change")
    await modal.locator(".dialog-title").click()
    await expect(modal).to_be_visible()
    await click_backdrop(page, "#modal-root")
    await expect(modal).to_be_hidden()


async def test_at_phone_width_the_composer_placeholder_fits_on_one_line(
    sandbox: Running, browser: BrowserContext
) -> None:
    """At 390 px the channel composer's placeholder fits its field whole, instead of wrapping out of sight."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await page.set_viewport_size({"width": 390, "height": 844})
    field = page.locator("#composer-text")
    await expect(field).to_have_attribute("placeholder", "Message #fiesta-ops")
    room, needed = await field.evaluate(
        """(field) => {
            const style = getComputedStyle(field);
            const pen = document.createElement("canvas").getContext("2d");
            pen.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
            const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            return [room, pen.measureText(field.placeholder).width];
        }"""
    )
    assert needed <= room, (needed, room)
    await page.set_viewport_size({"width": 1280, "height": 800})
    await expect(field).to_have_attribute(
        "placeholder", "Message #fiesta-ops — mention @countersign to ask"
    )
