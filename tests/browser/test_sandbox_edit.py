"""Edit before approve in the sandbox: the modal refuses a bad amount, and the edited card runs."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.async_api import BrowserContext, expect

from tests.browser.conftest import Running, confirm_approve, open_as
from tests.browser.test_sandbox_dialogs import card_in_thread
from tests.browser.test_sandbox_flows import ask

pytestmark = pytest.mark.browser


def _order(sandbox: Running) -> int:
    """A fulfilled order of the demo merchant with at least ₹300 to refund."""
    with sqlite3.connect(sandbox.database) as conn:
        row = conn.execute(
            "SELECT id FROM orders WHERE tenant_id = 1 AND status = 'fulfilled' "
            "AND total - refunded >= 30000 ORDER BY id LIMIT 1"
        ).fetchone()
    return int(row[0])


def _refunded(sandbox: Running, order: int) -> list[int]:
    with sqlite3.connect(sandbox.database) as conn:
        rows = conn.execute("SELECT amount FROM refunds WHERE order_id = ?", (order,)).fetchall()
    return [int(r[0]) for r in rows]


async def test_edit_a_refund_then_approve_it(sandbox: Running, browser: BrowserContext) -> None:
    """300 → -5 is refused in the modal; 300 → 200 replaces the card; approving refunds 200."""
    order = _order(sandbox)
    page = await open_as(browser, sandbox.url, "UARJUN")
    await ask(page, f"@countersign refund order {order} 300")
    await card_in_thread(page).locator(".bk-button", has_text="Edit").click()
    modal = page.locator("#modal-root")
    await expect(modal.locator(".dialog-title")).to_have_text("Edit this change")
    amount = modal.locator("#in-edit_amount-value")
    await expect(amount).to_have_value("300.00")

    await amount.fill("-5")
    await page.click("#modal-submit")
    await expect(modal.locator('[data-error-for="edit_amount"]')).to_contain_text("amount")
    await expect(modal).to_be_visible()
    assert _refunded(sandbox, order) == []

    await amount.fill("200")
    await page.click("#modal-submit")
    await expect(modal).to_be_hidden()
    replaced = page.locator("#thread .message", has=page.locator(".bk-header", has_text="Replaced"))
    await expect(replaced).to_contain_text("Replaced by an edited card: ₹300.00 → ₹200.00")
    card = card_in_thread(page)
    await expect(card).to_contain_text("Refund ₹200.00")

    await card.locator(".bk-button.primary", has_text="Approve").click()
    await confirm_approve(page)
    await expect(page.locator("#thread .bk-header", has_text="Approved and done")).to_be_visible()
    assert _refunded(sandbox, order) == [20_000]
