"""Routed cards in a real browser: Ravi asks, the managers' DM copies, the first approval everywhere."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import BrowserContext, Locator, Page, expect

from tests.browser.conftest import SHOTS, Running, confirm_approve, open_as
from tests.browser.test_sandbox_flows import switch

pytestmark = pytest.mark.browser

WAITING = "Waiting for a manager: Arjun Mehta or Meera Iyer"


async def side(page: Page, item: str) -> None:
    """Clicks a sidebar entry, unfolding the sidebar first on a phone."""
    if await page.locator("#menu").is_visible():
        await page.locator("#menu").click()
    await page.locator(item).first.click()


async def ravi_asks(page: Page, words: str, waiting: str = WAITING) -> Locator:
    """Ravi writes in #fiesta-ops; returns the card in the thread that opens."""
    await page.fill("#composer-text", words)
    await page.press("#composer-text", "Enter")
    card = page.locator("#thread .message", has=page.locator(".bk-header"))
    await expect(card).to_contain_text(waiting)
    return card


async def dm_copy(page: Page, request: int) -> Locator:
    """The copy of the card for ``request`` in the acting person's DM, after opening that DM."""
    await side(page, "#dm-list .side-item")
    await expect(page.locator("#pane-title")).to_contain_text("countersign")
    copy = page.locator(
        "#messages .message",
        has=page.locator(".bk-header"),
        has_text=re.compile(rf"request {request}\b"),
    )
    await expect(copy).to_have_count(1)
    return copy


async def thread_card(page: Page, words: str) -> Locator:
    """The card in the thread of the channel message ``words``."""
    await side(page, "#channel-list .side-item")
    said = page.locator(".message-text", has_text=re.compile(f"^@countersign {words}$"))
    await page.locator("#messages .message", has=said).locator(".reply-bar").click()
    return page.locator("#thread .message", has=page.locator(".bk-header"))


async def approve(page: Page, copy: Locator) -> None:
    await copy.locator(".bk-button.primary", has_text="Approve").click()
    await confirm_approve(page, "Approve this change?")


async def test_a_manager_approves_ravis_request_from_her_dm_and_every_copy_changes(
    sandbox: Running, browser: BrowserContext
) -> None:
    """Ravi's card waits for the managers; Meera approves her DM copy; her copy, Arjun's copy
    (approved by Meera, no buttons) and the thread's card all show it approved and done.

    The managers have each written to the app once before, as people must for the bot to know
    their Slack accounts."""
    page = await open_as(browser, sandbox.url, "URAVI")
    await switch(page, "URAVI")
    await ravi_asks(page, "@countersign approve request 1")
    await page.screenshot(path=SHOTS / "14-routed-card.png")

    await switch(page, "UMEERA")
    await expect(page.locator("#dm-list .unread")).to_have_text("1")
    mine = await dm_copy(page, 1)
    await expect(mine).to_contain_text("Ravi Kumar")
    await page.screenshot(path=SHOTS / "15-meeras-dm-copy.png")
    await approve(page, mine)
    await expect(mine.locator(".bk-header", has_text="Approved and done")).to_be_visible()
    await expect(mine.locator(".bk-button")).to_have_count(0)
    assert sandbox.request_status(1) == "approved"

    await switch(page, "UARJUN")
    his = await dm_copy(page, 1)
    await expect(his.locator(".bk-header", has_text="Approved and done")).to_be_visible()
    await expect(his).to_contain_text("Meera Iyer")
    await expect(his.locator(".bk-button")).to_have_count(0)
    await page.screenshot(path=SHOTS / "16-arjuns-copy-decided.png")

    await switch(page, "URAVI")
    card = await thread_card(page, "approve request 1")
    await expect(card.locator(".bk-header", has_text="Approved and done")).to_be_visible()
    await expect(card).to_contain_text("Meera Iyer")
    await expect(card.locator(".bk-button", has_text="Approve")).to_have_count(0)


async def test_two_managers_approve_request_5_and_the_first_shows_1_of_2_everywhere(
    sandbox: Running, browser: BrowserContext
) -> None:
    """₹42,000 needs two managers: after Meera's approval every copy says 1 of 2 and stays
    pending; Arjun's approval from his DM then finishes it on every copy."""
    page = await open_as(browser, sandbox.url, "URAVI")
    await switch(page, "URAVI")
    # Both managers must approve it, so the heading names them with "and".
    await ravi_asks(
        page,
        "@countersign approve request 5",
        waiting="Waiting for a manager: Arjun Mehta and Meera Iyer",
    )

    await switch(page, "UMEERA")
    mine = await dm_copy(page, 5)
    await approve(page, mine)
    await expect(mine).to_contain_text("1 of 2")
    await expect(mine).not_to_contain_text(":ballot_box_with_check:")  # drawn, not spelled out
    assert sandbox.request_status(5) == "pending"

    await switch(page, "URAVI")
    await expect(await thread_card(page, "approve request 5")).to_contain_text("1 of 2")

    await switch(page, "UARJUN")
    his = await dm_copy(page, 5)
    await expect(his).to_contain_text("1 of 2")
    await page.screenshot(path=SHOTS / "17-second-approval-waiting.png")
    await approve(page, his)
    await expect(his.locator(".bk-header", has_text="Approved and done")).to_be_visible()
    await expect(his.locator(".bk-button")).to_have_count(0)
    assert sandbox.request_status(5) == "approved"

    await switch(page, "UMEERA")
    await expect((await dm_copy(page, 5)).locator(".bk-header")).to_contain_text(
        "Approved and done"
    )
