"""The app's assistant pane on the sandbox page: a thread that starts gets the bot's title and
prompts, a tapped prompt is asked, the status shows while the answer is on its way; an answer
that grows is redrawn in place, and its feedback buttons are pressed as Slack presses them."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from playwright.async_api import BrowserContext, Page, expect

from bot.sandbox import FIESTA_OPS
from tests.browser.conftest import SHOTS, Alone, Running, open_as, settled

pytestmark = pytest.mark.browser

Json = dict[str, Any]
PHONE = {"width": 390, "height": 844}
_NEVER = 10.0  # a safety net for waits on the server side; nothing is timed

# Keeps every status line the page draws, however briefly: the offline model's turn shows
# one for a few milliseconds only.
_WATCH_STATUS = """() => {
  window.statusesSeen = [];
  const line = document.querySelector("#assistant-status");
  new MutationObserver(() => {
    if (!line.hidden && line.textContent) window.statusesSeen.push(line.textContent);
  }).observe(line, { childList: true, subtree: true, attributes: true });
}"""


async def _open_chat(page: Page) -> None:
    """From the app's DM (through the folded sidebar on a phone), its Chat tab."""
    if await page.locator("#menu").is_visible():
        await page.locator("#menu").click()
    await page.locator("#dm-list .side-item").first.click()
    await page.locator("#tabs button[data-tab='chat']").click()
    await expect(page.locator("#assistant")).to_be_visible()


async def test_on_a_phone_a_tapped_prompt_is_asked_and_answered_with_a_status_meanwhile(
    sandbox: Running, browser: BrowserContext
) -> None:
    """At 390 px the app DM's Chat opens a thread the bot titles and gives prompts to; tapping
    one asks it, the status shows while the bot reads, and goes once the answer is there."""
    page = await open_as(browser, sandbox.url, "UARJUN")
    await page.set_viewport_size(PHONE)
    await _open_chat(page)
    pane = page.locator("#assistant")
    # The bot titles the thread after its welcome's lookups: on a loaded machine that took
    # longer than expect's own 5 s, so it is given the pages' 20 s.
    await expect(pane.locator("#assistant-title")).to_have_text(
        "Countersign for Arjun Mehta", timeout=20_000
    )
    chip = pane.locator(".assistant-chip", has_text="Pending requests")
    await expect(chip).to_be_in_viewport(ratio=1)
    box = await chip.bounding_box()
    assert box is not None and box["height"] >= 44, box
    await page.screenshot(path=SHOTS / "40-phone-assistant-prompts.png")
    await page.evaluate(_WATCH_STATUS)
    await chip.click()
    asked = pane.locator(".message", has_text="Pending requests")
    await expect(asked).to_have_count(1)
    answer = pane.locator(".message", has=page.locator(".app-badge")).last
    await expect(answer).to_contain_text("request")
    await expect(pane.locator("#assistant-status")).to_be_hidden()
    await expect(pane.locator(".assistant-chip")).to_have_count(0)  # asked: the prompts go
    assert "countersign is reading requests…" in await page.evaluate("window.statusesSeen")
    assert await page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
    # The bot's own thumbs under its answer: a press reaches it and is thanked, privately.
    await expect(answer.locator(".bk-unknown")).to_have_count(0)
    thumb = pane.locator(".message", has_text="pending requests").locator(".bk-thumb.up")
    await thumb.click()
    await expect(thumb).to_have_attribute("aria-pressed", "true")
    await expect(pane).to_contain_text("Thanks, glad that helped.")
    await expect(page.locator("#toast")).to_be_hidden()
    await settled(page)
    await page.screenshot(path=SHOTS / "41-phone-assistant-answer.png")
    # On a wide screen the same thread is the split view beside the DM.
    await page.set_viewport_size({"width": 1280, "height": 800})
    await expect(page.locator(".pane")).to_be_in_viewport()
    await page.screenshot(path=SHOTS / "42-assistant-split-view.png")


def _feedback() -> Json:
    good = {"text": {"type": "plain_text", "text": "Good answer"}, "value": "good"}
    bad = {"text": {"type": "plain_text", "text": "Bad answer"}, "value": "bad"}
    element = {
        "type": "feedback_buttons",
        "action_id": "feedback",
        "positive_button": good,
        "negative_button": bad,
    }
    return {"type": "context_actions", "block_id": "feedback", "elements": [element]}


async def _started(alone: Alone, count: int) -> Json:
    """The ``count``-th assistant event (a thread started, a context changed), once it reached
    the bot, signed."""
    async with asyncio.timeout(_NEVER):
        while len(alone.events) < count:  # noqa: ASYNC110 - delivered from another task
            await asyncio.sleep(0.01)
    started: Json = alone.events[count - 1]["event"]
    return started


async def _thread(alone: Alone, page: Page) -> tuple[str, str]:
    """The thread the open pane shows, once its start reached the bot."""
    started = await _started(alone, 1)
    assert started["type"] == "assistant_thread_started"
    thread = started["assistant_thread"]
    assert thread["user_id"] == "UMEERA"
    assert thread["context"]["channel_id"] == FIESTA_OPS  # the channel she was looking at
    await expect(page.locator("#assistant-title")).to_have_text("New chat")
    return str(thread["channel_id"]), str(thread["thread_ts"])


async def test_a_growing_answer_is_redrawn_in_place_and_its_thumb_is_pressed(
    alone: Alone, browser: BrowserContext
) -> None:
    """The top bar's entry opens the split view beside the channel; the status shows until the
    answer comes; the answer's growing text is redrawn without the highlight of an edit, a
    thumb reaches the bot as a feedback_buttons press with its own value, History leads back
    to the thread from a new one, and moving to a channel tells the bot the new context."""
    page = await open_as(browser, alone.url, "UMEERA")
    await page.locator("#assistant-open").click()
    await expect(page.locator("#assistant")).to_be_visible()
    await expect(page.locator("#messages")).to_be_visible()  # side by side on a wide screen
    dm, thread_ts = await _thread(alone, page)
    where = {"channel_id": dm, "thread_ts": thread_ts}
    await alone.client.assistant_threads_setTitle(**where, title="Countersign for Meera Iyer")
    await alone.client.assistant_threads_setStatus(**where, status="is reading requests…")
    status = page.locator("#assistant-status")
    await expect(status).to_have_text("countersign is reading requests…")
    posted = await alone.client.chat_postMessage(channel=dm, thread_ts=thread_ts, text="Two")
    await expect(status).to_be_hidden()  # the answer came: Slack takes the status away
    answer = page.locator("#assistant .message", has_text="Two")
    for text in ("Two requests", "Two requests wait for you: 3 and 5."):
        await alone.client.chat_update(channel=dm, ts=posted["ts"], text=text)
        await expect(answer).to_have_text(re.compile(text))
        await expect(answer).not_to_have_class(re.compile("flash"))
    # The answer is complete: its text stays, and the feedback buttons come under it.
    last = "Two requests wait for you: 3 and 5."
    await alone.client.chat_update(channel=dm, ts=posted["ts"], text=last, blocks=[_feedback()])
    await expect(answer.locator(".message-text")).to_have_text(last)
    await expect(answer).not_to_have_class(re.compile("flash"))
    good = answer.locator(".bk-thumb.up")
    await expect(good).to_have_attribute("aria-label", "Good answer")
    await good.click()
    await expect(good).to_have_attribute("aria-pressed", "true")
    await expect(answer.locator(".bk-thumb.down")).to_have_attribute("aria-pressed", "false")
    await expect(page.locator("#toast")).to_be_hidden()
    press = alone.presses[-1]
    assert press["type"] == "block_actions"
    assert press["actions"][0] | {"action_ts": None} == {
        "type": "feedback_buttons",
        "action_id": "feedback",
        "block_id": "feedback",
        "value": "good",
        "action_ts": None,
    }
    assert press["container"]["message_ts"] == posted["ts"]
    assert press["message"]["thread_ts"] == thread_ts
    await settled(page)
    await page.screenshot(path=SHOTS / "43-assistant-feedback.png")
    # A new chat is a new thread; History leads back to the first.
    await page.locator("#assistant-new").click()
    await expect(page.locator("#assistant-title")).to_have_text("New chat")
    await expect(answer).to_have_count(0)
    assert (await _started(alone, 2))["assistant_thread"]["thread_ts"] != thread_ts
    history = page.locator("#assistant-history")
    await expect(history.locator("option")).to_have_count(2)
    await history.select_option(f"{dm}/{thread_ts}")
    await expect(page.locator("#assistant-title")).to_have_text("Countersign for Meera Iyer")
    await expect(answer.locator(".bk-thumb.up")).to_have_attribute("aria-pressed", "true")
    # Moving to a channel with the pane open, the bot is told of the new context.
    await page.locator("#channel-list .side-item").click()
    await expect(page.locator("#assistant")).to_be_visible()  # the split view stays
    moved = await _started(alone, 3)
    assert moved["type"] == "assistant_thread_context_changed"
    assert moved["assistant_thread"]["thread_ts"] == thread_ts
