"""Draws the approved ledger card at 390 px, as Slack (the sandbox) and Teams (Microsoft's Adaptive Cards renderer) show it; never changes the checkout.

Run from a checkout's root with its own environment, so the card is that checkout's:

    .venv/bin/python docs/screens/ledger_card.py --label after \\
        --adaptivecards <dir>/node_modules/adaptivecards/dist/adaptivecards.min.js

It starts `countersign sandbox` on a fresh SQLite (the stack `make run` starts), asks as Priya
for `use ledger__record_payment with supplier_id=SUP-001 amount=7800.50 reference=INV-2026-001`,
approves it, and saves the card's message at 390 px as ``ledger-card-390-slack-<label>.png``.
It then reads that card from the sandbox's database and draws the Adaptive Card Teams would
show everyone with the npm package ``adaptivecards`` (``npm install adaptivecards``, kept out
of the repository) as ``ledger-card-390-teams-<label>.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, os.getcwd())  # the checkout being drawn, not the one holding this script

from playwright.async_api import Page, async_playwright, expect

from bot.cards import card as cards
from bot.teams.adaptive import render
from tests.browser.conftest import ARGS, CHROMIUM, free_port, launch, open_as
from tools import CardSigner, CardStore
from tools.db import Database
from tools.toolsets.merchant import build_registry

PHONE = {"width": 390, "height": 844}
HERE = Path(__file__).resolve().parent
ASK = (
    "@countersign use ledger__record_payment with supplier_id=SUP-001 amount=7800.50 "
    "reference=INV-2026-001"
)
# Teams' light theme, as far as a card of text runs and buttons needs it.
HOST = {
    "fontFamily": "Segoe UI, Helvetica Neue, sans-serif",
    "spacing": {"small": 4, "default": 8, "medium": 12, "large": 16, "padding": 12},
    "actions": {"maxActions": 6, "buttonSpacing": 8, "actionsOrientation": "horizontal"},
}


async def _approve(page: Page) -> None:
    """Priya asks for the payment and approves it, through whichever confirm the build asks."""
    await page.fill("#composer-text", ASK)
    await page.press("#composer-text", "Enter")
    card = page.locator("#thread .message", has=page.locator(".bk-header"))
    approve = card.locator(".bk-button.primary", has_text="Approve")
    await expect(approve).to_be_visible(timeout=60_000)
    await approve.click()
    dialog, modal = page.locator("#confirm-root .dialog"), page.locator("#modal-root .dialog")
    await expect(dialog.or_(modal).first).to_be_visible()
    await page.click("#confirm-ok" if await dialog.is_visible() else "#modal-submit")
    done = page.locator("#thread .bk-header", has_text="Approved and done")
    await expect(done).to_be_visible(timeout=60_000)
    await page.evaluate("Promise.allSettled(document.getAnimations().map((a) => a.finished))")


async def _teams_card(database: Path) -> dict[str, Any]:
    """The Adaptive Card everyone sees of the approved card, read from the sandbox's database."""
    db = Database(f"sqlite+aiosqlite:///{database}")
    try:
        registry = build_registry(db, CardSigner("drawing only: no card is signed here"))
        record = (await CardStore(db).rows())[-1]  # the payment just approved
        card = await cards.load(registry, record.id)
        assert card is not None
        return render(card.spec(now=registry.now()), view="everyone")
    finally:
        await db.dispose()


async def _draw_teams(page: Page, card: dict[str, Any], script: Path, out: Path) -> None:
    await page.set_content("<body style='margin:0;background:#f5f5f5'><div id=c></div></body>")
    await page.add_script_tag(path=str(script))
    await page.evaluate(
        """([card, host]) => {
          const ac = new AdaptiveCards.AdaptiveCard();
          ac.hostConfig = new AdaptiveCards.HostConfig(host);
          ac.parse(card);
          const el = ac.render();
          el.style.background = '#fff';
          document.getElementById('c').appendChild(el);
        }""",
        [card, HOST],
    )
    await page.locator("#c").screenshot(path=str(out))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="before or after")
    parser.add_argument("--adaptivecards", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, launch(Path(home), free_port()) as running:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            context = await browser.new_context(viewport=PHONE, device_scale_factor=2)
            page = await open_as(context, running.url, "UPRIYA")
            await page.set_viewport_size(PHONE)
            await _approve(page)
            card = page.locator("#thread .message", has=page.locator(".bk-header")).last
            await card.screenshot(path=str(args.out / f"ledger-card-390-slack-{args.label}.png"))
            teams = await _teams_card(running.database)
            json_out = Path(home) / "teams.json"
            json_out.write_text(json.dumps(teams))
            drawn = await context.new_page()
            await drawn.set_viewport_size(PHONE)
            out = args.out / f"ledger-card-390-teams-{args.label}.png"
            await _draw_teams(drawn, teams, args.adaptivecards, out)
            await browser.close()


if __name__ == "__main__":
    asyncio.run(main())
