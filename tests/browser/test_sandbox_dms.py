"""The app's DMs on the sandbox page: each person sees their own, unread, and presses from there."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import BrowserContext, Page, expect

from bot.sandbox import HARBOR_TEAM
from tests.browser.conftest import SHOTS, Alone, open_as
from tests.browser.test_sandbox_flows import switch

pytestmark = pytest.mark.browser

Json = dict[str, Any]


def card(title: str, *, buttons: bool = True) -> list[Json]:
    """A card shaped like the bot's: a header, a line, and Approve with its confirmation."""
    blocks: list[Json] = [
        {"type": "header", "text": {"type": "plain_text", "text": title}},
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "*Ravi Kumar* asks: approve request 1"},
        },
    ]
    if buttons:
        approve = {
            "type": "button",
            "action_id": "approve",
            "text": {"type": "plain_text", "text": "Approve"},
            "value": "signed-token",
            "style": "primary",
            "confirm": {
                "title": {"type": "plain_text", "text": "Approve this change?"},
                "text": {"type": "plain_text", "text": "Indiranagar: approve request 1."},
                "confirm": {"type": "plain_text", "text": "Approve"},
                "deny": {"type": "plain_text", "text": "Cancel"},
            },
        }
        reject = {
            "type": "button",
            "action_id": "reject",
            "text": {"type": "plain_text", "text": "Reject"},
            "value": "signed-token",
            "style": "danger",
        }
        blocks.append({"type": "actions", "block_id": "card:1", "elements": [approve, reject]})
    return blocks


async def send_copy(alone: Alone, user: str, title: str) -> tuple[str, str]:
    """Posts a card into ``user``'s DM as the Slack adapter does: open the DM, then post."""
    opened = await alone.client.conversations_open(users=user)
    dm = opened["channel"]["id"]
    posted = await alone.client.chat_postMessage(
        channel=dm, text=f"{title}: Ravi Kumar asks you", blocks=card(title)
    )
    return dm, str(posted["ts"])


async def open_dm(page: Page) -> None:
    await page.locator("#dm-list .side-item").first.click()
    await expect(page.locator("#pane-title")).to_contain_text("countersign")


async def test_a_managers_dm_shows_the_card_unread_and_her_press_reaches_the_bot(
    alone: Alone, browser: BrowserContext
) -> None:
    """Meera sees the copy in her DM, marked unread until opened; her Approve is sent with the DM as channel and the card then changes in place."""
    dm, ts = await send_copy(alone, "UMEERA", "Approval needed")

    async def decide(payload: Json) -> None:
        done = card("Approved by Meera Iyer", buttons=False)
        await alone.client.chat_update(channel=dm, ts=ts, text="Approved", blocks=done)

    alone.on_press = decide
    page = await open_as(browser, alone.url, "UARJUN")
    await expect(page.locator("#dm-list .unread")).to_have_count(0)
    await switch(page, "UMEERA")
    badge = page.locator("#dm-list .side-item .unread")
    await expect(badge).to_have_text("1")
    await open_dm(page)
    await expect(badge).to_have_count(0)
    await expect(page.locator("#pane-sub")).to_contain_text("Meera Iyer")
    copy = page.locator("#messages .message", has=page.locator(".bk-header"))
    await expect(copy.locator(".bk-header")).to_have_text("Approval needed")
    await page.screenshot(path=SHOTS / "11-dm-copy.png")
    await copy.locator(".bk-button.primary", has_text="Approve").click()
    await expect(page.locator("#confirm-root .dialog-title")).to_have_text("Approve this change?")
    await page.click("#confirm-ok")
    await expect(copy.locator(".bk-header")).to_have_text("Approved by Meera Iyer")
    await expect(copy.locator(".bk-button")).to_have_count(0)
    [press] = alone.presses
    assert press["user"]["id"] == "UMEERA"
    assert press["channel"] == {"id": dm, "name": "directmessage"}
    assert press["container"] == {
        "type": "message",
        "message_ts": ts,
        "channel_id": dm,
        "is_ephemeral": False,
    }
    assert "thread_ts" not in press["message"]


async def test_each_person_sees_only_their_own_dm(alone: Alone, browser: BrowserContext) -> None:
    """Switching "Acting as" swaps the DM: Arjun's copy is his, Meera's hers, Ravi has none."""
    await send_copy(alone, "UMEERA", "For Meera")
    await send_copy(alone, "UARJUN", "For Arjun")
    page = await open_as(browser, alone.url, "UMEERA")
    await open_dm(page)
    headers = page.locator("#messages .bk-header")
    await expect(headers).to_have_text(["For Meera"])
    await switch(page, "UARJUN")
    await open_dm(page)
    await expect(headers).to_have_text(["For Arjun"])
    await switch(page, "URAVI")
    await open_dm(page)
    await expect(page.locator("#messages .empty-title")).to_contain_text("your DM")
    await expect(headers).to_have_count(0)


async def test_a_copy_arriving_while_elsewhere_is_counted_live(
    alone: Alone, browser: BrowserContext
) -> None:
    """A copy posted while Meera reads the channel raises her DM's count without a reload."""
    page = await open_as(browser, alone.url, "UMEERA")
    await expect(page.locator("#dm-list .unread")).to_have_count(0)
    await send_copy(alone, "UMEERA", "First")
    await expect(page.locator("#dm-list .unread")).to_have_text("1")
    await send_copy(alone, "UMEERA", "Second")
    await expect(page.locator("#dm-list .unread")).to_have_text("2")
    await open_dm(page)
    await expect(page.locator("#messages .bk-header")).to_have_text(["First", "Second"])
    await expect(page.locator("#dm-list .unread")).to_have_count(0)
    await send_copy(alone, "UMEERA", "Third")  # read as it arrives: the DM is open
    await expect(page.locator("#messages .bk-header")).to_have_count(3)
    await expect(page.locator("#dm-list .unread")).to_have_count(0)


async def test_a_dm_from_another_workspace_appears_live_and_says_which(
    alone: Alone, browser: BrowserContext
) -> None:
    """A DM Harbor Books' installation opens for Meera shows up without a reload, named for Harbor."""
    page = await open_as(browser, alone.url, "UMEERA")
    await expect(page.locator("#dm-list .side-item")).to_have_count(1)
    opened = await alone.client.conversations_open(users="UMEERA", team_id=HARBOR_TEAM)
    await alone.client.chat_postMessage(channel=opened["channel"]["id"], text="From Harbor")
    harbor = page.locator("#dm-list .side-item", has_text="countersign · Harbor Books")
    await expect(harbor.locator(".unread")).to_have_text("1")
    await harbor.click()
    await expect(page.locator("#pane-title")).to_contain_text("countersign · Harbor Books")
    await expect(page.locator("#messages .message-text")).to_have_text(["From Harbor"])
