"""Thumbs on answers over the real endpoint: recorded in the audit log and shown by the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.sandbox import Message
from bot.sandbox.payloads import block_action
from bot.slack.thumbs import FEEDBACK_ACTION
from tests.bot.test_cli import cli
from tests.slack.conftest import DM, Bot, buttons
from tests.support.slack_requests import message
from tools import FeedbackLog


async def _answered(bot: Bot, text: str = "branches") -> tuple[str, Message]:
    """Arjun asks in an assistant thread; returns the thread and the answer's message."""
    thread = bot.ts()
    await bot.send(
        message("UARJUN", text, channel=DM, ts=bot.ts(), thread_ts=thread, channel_type="im")
    )
    answer = next(
        m
        for m in bot.slack.thread(DM, thread)
        if m.user == bot.slack.bot_user_id and not buttons(m.blocks)
    )
    return thread, answer


def _thumb(user: str, answer: Message, *, good: bool) -> dict[str, Any]:
    """A press on the answer's feedback buttons, as Slack sends it."""
    block = next(b for b in answer.blocks if b["type"] == "context_actions")
    element = block["elements"][0]
    pressed = element["positive_button" if good else "negative_button"]
    payload = block_action(
        user,
        action_id=element["action_id"],
        value=pressed["value"],
        block_id=block["block_id"],
        channel=answer.channel,
        message_ts=answer.ts,
        thread_ts=answer.thread_ts,
        channel_name="directmessage",
    )
    payload["actions"][0].update(type="feedback_buttons", text=pressed["text"])
    return payload


async def test_a_thumbs_down_is_recorded_with_its_answer_and_shown_by_the_cli(
    bot: Bot, database_url: str, tmp_path: Path
) -> None:
    """The press names the conversation, person, merchant and answer; the presser is thanked."""
    thread, answer = await _answered(bot)
    assert await bot.interact(_thumb("UARJUN", answer, good=False)) == 200
    [press] = await FeedbackLog(bot.services.db).recent()
    assert (press.userid, press.tenantid, press.good) == (2, 1, False)
    assert press.conversation == f"{bot.slack.team_id}:{DM}:{thread}"
    assert press.answer == f"{DM}/{answer.ts}"
    assert any("Thanks" in text for text in bot.ephemerals("UARJUN"))
    shown = cli(tmp_path, database_url, "audit", "--feedback")
    assert shown.code == 0, shown
    assert "Arjun Mehta" in shown.out and "not helpful" in shown.out
    assert f"{DM}/{answer.ts}" in shown.out and thread in shown.out
    assert "0 helpful, 1 not helpful" in shown.out


async def test_feedback_is_shown_per_merchant(bot: Bot, database_url: str, tmp_path: Path) -> None:
    """--tenant keeps one merchant's presses: Fiesta's thumbs up is not another merchant's."""
    _, answer = await _answered(bot)
    await bot.interact(_thumb("UARJUN", answer, good=True))
    mine = cli(tmp_path, database_url, "audit", "--feedback", "--tenant", "1")
    theirs = cli(tmp_path, database_url, "audit", "--feedback", "--tenant", "2")
    assert "1 helpful, 0 not helpful" in mine.out and "for Fiesta" in mine.out
    assert "No feedback on answers for" in theirs.out
    plain = cli(tmp_path, database_url, "audit")
    assert FEEDBACK_ACTION in plain.out, "the audit log itself keeps the press"
    about_a_card = cli(tmp_path, database_url, "audit", "--feedback", "--card", "abc")
    assert about_a_card.code == 1 and "never cards" in about_a_card.err


async def test_a_press_by_someone_unlinked_is_not_recorded(bot: Bot) -> None:
    """A stranger's thumbs are answered with how to get linked, and nothing is recorded."""
    _, answer = await _answered(bot)
    assert await bot.interact(_thumb("USTRANGER", answer, good=True)) == 200
    assert await FeedbackLog(bot.services.db).recent() == []
    assert any("don't know who you are" in text for text in bot.ephemerals("USTRANGER"))


async def test_a_press_that_is_not_a_rating_is_ignored(bot: Bot) -> None:
    """A value other than the two ratings records nothing (a press is Slack's, its value ours)."""
    _, answer = await _answered(bot)
    payload = _thumb("UARJUN", answer, good=True)
    payload["actions"][0]["value"] = "excellent"
    assert await bot.interact(payload) == 200
    assert await FeedbackLog(bot.services.db).recent() == []
