"""The sandbox's chrome at 390 px: the top bar whole, the unread badge beside the ☰, Withdraw above the Reply box."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import BrowserContext, Locator, Page, expect

from tests.browser.conftest import SHOTS, Alone, Running, open_as
from tests.browser.test_sandbox_dms import send_copy
from tests.browser.test_sandbox_routing import ravi_asks

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}

Box = dict[str, float]


def _overlap(one: Box, other: Box) -> bool:
    return not (
        one["x"] + one["width"] <= other["x"]
        or other["x"] + other["width"] <= one["x"]
        or one["y"] + one["height"] <= other["y"]
        or other["y"] + other["height"] <= one["y"]
    )


async def _box(item: Locator) -> Box:
    box = await item.bounding_box()
    assert box is not None
    return box


def _inside(box: Box, width: float = PHONE["width"], height: float = PHONE["height"]) -> bool:
    return (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width
        and (box["y"] + box["height"] <= height)
    )


async def _whole(item: Locator) -> bool:
    """Whether an element shows all of its content (nothing cut by an ellipsis or overflow)."""
    return bool(await item.evaluate("e => e.scrollWidth <= e.clientWidth"))


async def test_the_top_bar_shows_countersign_and_who_you_act_as_whole(
    alone: Alone, browser: BrowserContext
) -> None:
    """At 390 px the top bar read "Counters…" and cut the Acting-as menu at the screen's edge;
    now the name, the ✦, the menu and the ☰ each fit whole, none over another."""
    page = await open_as(browser, alone.url, "UMEERA")
    await page.set_viewport_size(PHONE)
    title = page.locator(".topbar-title")
    assert await _whole(title), await title.inner_text()
    parts = [page.locator(s) for s in ("#menu", ".topbar-title", "#assistant-open", "#as")]
    boxes = [await _box(p) for p in parts]
    assert all(_inside(b) for b in boxes), boxes
    for n, one in enumerate(boxes):
        assert not any(_overlap(one, other) for other in boxes[n + 1 :]), boxes
    chosen = await page.locator("#as").evaluate(
        "s => { const c = document.createElement('canvas').getContext('2d');"
        " c.font = getComputedStyle(s).font;"
        " return [c.measureText(s.options[s.selectedIndex].text).width, s.clientWidth]; }"
    )
    assert chosen[0] <= chosen[1], chosen  # the name acted as is not cut
    await page.screenshot(path=SHOTS / "13-phone-top-bar.png")


async def _glyph_and_badge(page: Page) -> tuple[Box, Box]:
    found: Any = await page.locator("#menu").evaluate(
        """m => {
          const r = document.createRange(); r.selectNodeContents(m);
          const g = r.getBoundingClientRect(); const b = m.getBoundingClientRect();
          const a = getComputedStyle(m, '::after');
          const w = parseFloat(a.width), h = parseFloat(a.height);
          const left = a.left !== 'auto' ? b.left + parseFloat(a.left)
                                         : b.right - parseFloat(a.right) - w;
          return [{x: g.left, y: g.top, width: g.width, height: g.height},
                  {x: left, y: b.top + parseFloat(a.top), width: w, height: h}];
        }"""
    )
    return found[0], found[1]


async def test_the_unread_badge_sits_beside_the_menu_not_over_it(
    alone: Alone, browser: BrowserContext
) -> None:
    """The red count covered the ☰ it counts for; it now sits clear of the glyph, on screen."""
    await send_copy(alone, "UMEERA", "Approval needed")
    page = await open_as(browser, alone.url, "UMEERA")
    await page.set_viewport_size(PHONE)
    await expect(page.locator("#menu")).to_have_attribute("data-unread", "1")
    glyph, badge = await _glyph_and_badge(page)
    assert not _overlap(glyph, badge), (glyph, badge)
    assert _inside(badge), badge
    await page.screenshot(path=SHOTS / "14-phone-menu-badge.png")


async def test_withdraw_shows_above_the_reply_box_without_scrolling(
    sandbox: Running, browser: BrowserContext
) -> None:
    """Ravi's routed card in its thread: its Withdraw sat under the Reply box until he
    scrolled; it now shows whole, above the box, as the card arrives."""
    page = await open_as(browser, sandbox.url, "URAVI")
    await page.set_viewport_size(PHONE)
    await ravi_asks(page, "@countersign approve request 2")
    # Opened again from the channel, as after reading elsewhere: the thread opens at its end.
    await page.locator("#thread-close").click()
    said = page.locator(".message-text", has_text="approve request 2")
    await page.locator("#messages .message", has=said).locator(".reply-bar").click()
    card = page.locator("#thread .message", has=page.locator(".bk-header"))
    withdraw = card.locator(".bk-button", has_text="Withdraw")
    await expect(withdraw).to_be_visible()
    await page.wait_for_timeout(600)  # the thread's own scroll to its end has run
    pressed = await _box(withdraw)
    reply = await _box(page.locator("#thread-composer"))
    pane = await _box(page.locator("#thread-messages"))
    assert not _overlap(pressed, reply), (pressed, reply)
    assert pressed["y"] + pressed["height"] <= pane["y"] + pane["height"], (pressed, pane)
    assert _inside(pressed), pressed
    await page.screenshot(path=SHOTS / "15-phone-withdraw.png")
