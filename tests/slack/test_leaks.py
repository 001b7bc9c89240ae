"""No internal detail reaches a reader: no person ids, no machine timestamps, no UTC outside a date token."""

from __future__ import annotations

import json
import re

from tests.slack.conftest import CHANNEL, Bot

# A Slack date token, and a rich_text date element, carry a UTC fallback for old clients;
# only what is outside one is read.
_TOKEN = re.compile(r"<!date\^\d+\^[^|>]*\|[^>]*>|\"fallback\": \"[^\"]*\"")
_LEAKS = (
    re.compile(r"\(person \d+\)"),
    re.compile(r"\bperson \d+\b"),
    re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}"),
    re.compile(r"\bUTC\b"),
    re.compile(r"\+00:00"),
)


def _leaks(said: str) -> list[str]:
    shown = _TOKEN.sub("<date>", said)
    return [found.group(0) for leak in _LEAKS for found in leak.finditer(shown)]


async def test_a_whole_flow_shows_no_ids_and_no_machine_times(bot: Bot) -> None:
    """Reading a request, proposing, approving and the audit line: "Ravi Kumar (person 4)" and
    "Created at: 2026-11-30T02:08+00:00" once reached the card and the reply; every time a
    reader sees is now a Slack date token, shown in their own zone."""
    await bot.mention("UARJUN", "show request 1")
    await bot.mention("UARJUN", "approve request 1")
    card = bot.cards()[0]
    assert await bot.press("UARJUN", card) == 200
    said = [m for m in bot.slack.messages if m.channel == CHANNEL and m.user == "UBOT"]
    assert len(said) >= 4  # the two replies, the card and its audit line
    for message in said:
        text = message.text + json.dumps(message.blocks, ensure_ascii=False)
        assert _leaks(text) == [], text
    assert any("<!date^" in m.text for m in said)  # the request's times, in each reader's zone
