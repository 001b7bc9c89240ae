"""The sandbox in a real browser: asking, approving, being refused, rejecting, and on a phone."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.browser.conftest import SHOTS, Running, confirm_approve, open_as, settled

pytestmark = pytest.mark.browser


async def ask(page: Page, words: str) -> None:
    """Types in #fiesta-ops and waits for the card in the thread that opens."""
    await page.fill("#composer-text", words)
    await page.press("#composer-text", "Enter")
    await expect(page.locator("#thread .bk-header", has_text="Approval needed")).to_be_visible()


async def switch(page: Page, person: str) -> None:
    await page.select_option("#as", person)
    await page.wait_for_selector(f"body[data-as='{person}']")


async def test_arjun_approves_and_the_channel_sees_it(
    sandbox: Running, browser: BrowserContext
) -> None:
    """Arjun asks, approves through the confirm dialog; the card changes in place and the audit line appears."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await ask(page, "@countersign approve request 1")
    card = page.locator(
        "#thread .message", has=page.locator(".bk-header", has_text="Approval needed")
    )
    await expect(card.locator(".bk-rich").nth(1)).to_contain_text("Indiranagar")
    await page.screenshot(path=SHOTS / "01-card.png")
    await card.locator(".bk-button.primary", has_text="Approve").click()
    await expect(page.locator("#modal-root .dialog-title")).to_have_text("Approve this change?")
    await page.screenshot(path=SHOTS / "02-confirm.png")
    await confirm_approve(page)
    await expect(page.locator("#thread .bk-header", has_text="Approved and done")).to_be_visible()
    await expect(page.locator("#thread .bk-button")).to_have_count(0)
    audit = page.locator(
        "#messages .message", has_text="Approved and done (Arjun Mehta): Approve request 1"
    )
    await expect(audit).to_be_visible()
    await expect(audit.locator(".broadcast-note")).to_contain_text("replied to a thread")
    await settled(page)  # the update's highlight faded, for the picture
    await page.screenshot(path=SHOTS / "03-approved.png")
    assert sandbox.request_status(1) == "approved"


async def test_meera_pressing_arjuns_card_is_refused_privately(
    sandbox: Running, browser: BrowserContext
) -> None:
    """Meera's press on Arjun's card shows her an ephemeral refusal, nobody else, and changes nothing."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await ask(page, "@countersign approve request 2")
    await switch(page, "UMEERA")
    words = page.locator(".message-text", has_text=re.compile(r"^@countersign approve request 2$"))
    asked = page.locator("#messages .message", has=words)
    await asked.locator(".reply-bar").click()
    card = page.locator(
        "#thread .message", has=page.locator(".bk-header", has_text="Approval needed")
    )
    await card.locator(".bk-button.primary", has_text="Approve").click()
    # Refused on her first press: no "Yes, approve" dialog comes first.
    refusal = page.locator("#thread .message.ephemeral")
    await expect(refusal).to_contain_text("This approval belongs to @Arjun Mehta")
    await expect(refusal.locator(".only-you")).to_have_text("Only visible to you")
    await expect(card.locator(".bk-button.primary")).to_be_visible()
    await page.screenshot(path=SHOTS / "04-refused-for-meera.png")
    assert sandbox.request_status(2) == "pending"
    await switch(page, "UARJUN")
    await asked.locator(".reply-bar").click()
    await expect(page.locator("#thread .bk-header", has_text="Approval needed")).to_be_visible()
    await expect(page.locator("#thread .message.ephemeral")).to_have_count(0)


async def test_reject_with_a_reason_through_the_modal(
    sandbox: Running, browser: BrowserContext
) -> None:
    """Reject opens the modal; the reason typed there ends up on the card and in the channel."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await ask(page, "@countersign approve request 3")
    card = page.locator(
        "#thread .message", has=page.locator(".bk-header", has_text="Approval needed")
    )
    await card.locator(".bk-button.danger", has_text="Reject").click()
    modal = page.locator("#modal-root .dialog")
    await expect(modal.locator(".dialog-title")).to_have_text("Reject this change")
    await expect(modal).to_contain_text("You are rejecting this change")
    await expect(modal).to_contain_text("Approve request 3")
    await expect(modal.locator(".bk-label")).to_contain_text("Reason (optional)")
    await expect(modal.locator(".bk-hint")).to_contain_text("Leave it empty")
    await modal.locator("textarea").fill("Paneer supplier changes next week; <b>wait</b>.")
    await page.screenshot(path=SHOTS / "05-reject-modal.png")
    await page.click("#modal-submit")
    await expect(page.locator("#modal-root")).to_be_hidden()
    await expect(page.locator("#thread .bk-header", has_text="Not approved")).to_be_visible()
    # The card's line first; the audit line in the thread quotes the reason too.
    reason = page.locator("#thread .bk-rich", has_text="Paneer supplier").first
    await expect(reason).to_contain_text("<b>wait</b>")  # shown as text, never as markup
    await expect(
        page.locator("#messages .message", has_text="Not approved (Arjun Mehta): Approve request 3")
    ).to_be_visible()
    await page.screenshot(path=SHOTS / "06-rejected.png")
    assert sandbox.request_status(3) == "pending"  # the card was rejected; the request still waits


async def test_on_a_phone_the_card_is_legible_and_the_buttons_tappable(
    sandbox: Running, browser: BrowserContext
) -> None:
    """At 390 px the card fits the screen, the buttons are at least 44 px tall, and approving works."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await page.set_viewport_size({"width": 390, "height": 844})
    await ask(page, "@countersign approve request 6")
    card = page.locator(
        "#thread .message", has=page.locator(".bk-header", has_text="Approval needed")
    )
    approve = card.locator(".bk-button.primary", has_text="Approve")
    await approve.scroll_into_view_if_needed()
    for button in (approve, card.locator(".bk-button.danger")):
        box = await button.bounding_box()
        assert box is not None and box["height"] >= 44 and box["width"] >= 88
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= 390
    await page.screenshot(path=SHOTS / "07-phone-card.png")
    await approve.click()
    await confirm_approve(page)
    await expect(page.locator("#thread .bk-header", has_text="Approved and done")).to_be_visible()
    await settled(page)
    await page.screenshot(path=SHOTS / "08-phone-approved.png")
    assert sandbox.request_status(6) == "approved"


async def test_the_app_home_lists_the_persons_waiting_cards(
    sandbox: Running, browser: BrowserContext
) -> None:
    """Opening the app's Home tab shows Arjun's waiting cards with their buttons."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await ask(page, "@countersign approve request 5")
    await page.locator("#dm-list .side-item").click()
    await page.locator("#tabs button", has_text="Home").click()
    home = page.locator("#home")
    await expect(home).to_contain_text("Waiting for you")
    await expect(home.locator(".bk-button.primary", has_text="Approve").first).to_be_visible()
    await page.screenshot(path=SHOTS / "09-app-home.png")


async def test_the_demo_ledger_answers_a_read_and_turns_a_payment_into_a_card(
    sandbox: Running, browser: BrowserContext
) -> None:
    """The demo's own MCP server, as the README shows it: a read is answered at once, a
    payment becomes a card reading the demo's sentence, with the ledger's preview, and Approve
    records it."""
    page = await open_as(browser, sandbox.url, "UPRIYA")
    await page.fill("#composer-text", "@countersign use ledger__list_suppliers")
    await page.press("#composer-text", "Enter")
    # The first call starts the ledger (a Python process over stdio): seconds, once.
    answer = page.locator("#thread .message", has_text="Nandi Dairy")
    await expect(answer).to_be_visible(timeout=30_000)
    await ask(
        page,
        "@countersign use ledger__record_payment with supplier_id=SUP-001 amount=7800.50 "
        "reference=INV-2026-001",
    )
    card = page.locator(
        "#thread .message", has=page.locator(".bk-header", has_text="Approval needed")
    )
    await expect(card).to_contain_text("Pay ₹7,800.50 to SUP-001, reference INV-2026-001")
    await expect(card).to_contain_text("amount: 7800.5 (₹7,800.50)")
    await expect(card).to_contain_text("Preview")
    await page.screenshot(path=SHOTS / "30-ledger-card.png")
    await card.locator(".bk-button.primary", has_text="Approve").click()
    await confirm_approve(page)
    await expect(page.locator("#thread .bk-header", has_text="Approved and done")).to_be_visible()
