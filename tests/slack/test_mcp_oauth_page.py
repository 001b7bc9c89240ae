"""The authorization page in a real headless Chromium: one email, the code, and on by itself after Allow."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.async_api import Browser, Route, async_playwright

from tests.browser.conftest import ARGS, CHROMIUM, SHOTS
from tests.slack.conftest import Bot, buttons, said
from tests.slack.test_mcp_oauth import REDIRECT, _base, _consent_cards, _pkce, _register

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
async def chromium() -> AsyncIterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make deps` (apt-get install chromium)")
    async with async_playwright() as playwright:
        # A fresh profile of its own each time (Playwright makes one for a plain launch).
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def test_the_page_asks_one_email_shows_the_cards_code_and_moves_on_after_allow(
    bot: Bot, chromium: Browser
) -> None:
    """A person opens the authorization link, types their work email and presses the one
    button; the page shows the code the card in their Slack DM shows, and when they press
    Allow there it goes on to the client's redirect with code and state, with no reload."""
    client_id = await _register(bot)
    _, challenge = _pkce()
    query = {
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
        "code_challenge": challenge, "code_challenge_method": "S256", "state": "st-9",
        "resource": f"{_base(bot)}/mcp",
    }  # fmt: skip
    page = await (await chromium.new_context()).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    async def client_site(route: Route) -> None:
        await route.fulfill(status=200, content_type="text/html", body="<p>Connected.</p>")

    await page.route("https://claude.ai/**", client_site)
    await page.goto(f"{_base(bot)}/authorize?{urlencode(query)}")
    assert await page.locator("input").count() == 2  # the email, and the request's handle
    assert await page.locator("input[type=email]").count() == 1
    assert await page.locator("button").count() == 1
    assert "Claude" in await page.inner_text("body")
    await page.fill("input[type=email]", "arjun@fiesta.example")
    await page.click("button")
    await page.wait_for_selector("#code")
    shown = (await page.inner_text("#code")).strip()
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / "oauth-waiting.png"))
    [card] = _consent_cards(bot, "UARJUN")
    assert f"shows the code *{shown}*" in said(card.blocks)
    assert page.url.startswith(_base(bot))  # still waiting: nothing pressed yet

    await bot.tap("UARJUN", card, "consent_allow")
    assert buttons(bot.shown(card).blocks) == []
    await page.wait_for_url("https://claude.ai/**", timeout=15_000)
    arrived = parse_qs(urlsplit(page.url).query)
    assert arrived["state"] == ["st-9"]
    assert arrived["code"][0].startswith("cs_oac_")
    assert errors == []
