"""What a person copies from a Slack card is exactly what runs: data sits in elements Slack does
not parse (plain_text, rich_text), never in mrkdwn with look-alike characters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import text

from bot.sandbox import Message
from tests.slack.conftest import CHANNEL, Bot, validate
from tests.support.slack_requests import view_submission

# A branch and a reason holding every character mrkdwn would restyle or read as a token.
BRANCH = "Store_1 *A&B* ~old~ `x`"
REASON = "INV_2026_001 for /data/notes_q4.txt *urgent* ~later~ `cat` <!channel> & Co"
WHY = "Wrong supplier_ref: INV_2026_002 <!here> & *not* ours"


async def _poison(bot: Bot) -> None:
    async with bot.services.db.session(write=True) as session, session.begin():
        await session.execute(text("UPDATE branches SET name = :n WHERE id = 1"), {"n": BRANCH})
        await session.execute(
            text("UPDATE branch_requests SET reason = :r WHERE id = 1"), {"r": REASON}
        )


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _nodes(value)
    elif isinstance(node, list):
        for item in node:
            yield from _nodes(item)


def literal(blocks: list[dict[str, Any]]) -> list[str]:
    """The texts Slack shows as typed: plain_text objects and rich_text ``text`` elements."""
    return [
        str(n["text"])
        for n in _nodes(blocks)
        if n.get("type") in {"plain_text", "text"} and isinstance(n.get("text"), str)
    ]


def mrkdwn(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(n["text"]) for n in _nodes(blocks) if n.get("type") == "mrkdwn"]


def _live_tokens(said: str) -> bool:
    """Whether mrkdwn text holds a Slack token other than a time (``<!date^…>``) or a mention."""
    return "<!" in said.replace("<!date^", "") or "<http" in said


def _assert_copyable(message: Message, *wanted: str) -> None:
    validate(message.blocks)
    shown = literal(message.blocks)
    for value in wanted:
        assert any(value in t for t in shown), (value, shown)
    for said in mrkdwn(message.blocks):
        assert not _live_tokens(said), said
        assert all(value not in said for value in wanted), said


async def test_a_posted_card_shows_its_data_verbatim_in_unparsed_elements(bot: Bot) -> None:
    """A branch named ``Store_1 *A&B*`` and a reason naming ``INV_2026_001`` and
    ``/data/notes_q4.txt`` are on the card exactly as typed, in plain_text or rich_text; no
    mrkdwn on it holds them or a live ``<!channel>``; the push text carries them unchanged but
    for Slack's own three escapes. They once became look-alikes (ˍ ∗ ∼ ˋ): what a person
    copied from the card was not what would run."""
    await _poison(bot)
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    _assert_copyable(card, BRANCH, REASON)
    assert "Store_1 *A&amp;B* ~old~ `x`" in card.text
    assert "\u02cd" not in card.text and "\u2217" not in card.text


async def test_a_reason_typed_in_the_modal_reaches_card_and_audit_line_verbatim(bot: Bot) -> None:
    """The reason a person types when rejecting is shown as typed on the decided card and in
    the channel's audit line (rich_text), and the audit line's push text is escaped only for
    ``&``, ``<`` and ``>``: nobody is pinged, nothing is restyled, nothing is replaced."""
    await _poison(bot)
    thread = await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    await bot.press("UARJUN", card, action="card_reject")
    view = bot.slack.called("views.open")[0]["view"]
    assert any(BRANCH in t for t in literal(view["blocks"]))
    await bot.interact(view_submission("UARJUN", view, reason=WHY))
    _assert_copyable(bot.shown(card), BRANCH, REASON, WHY)
    [audit] = [m for m in bot.slack.thread(CHANNEL, thread) if m.reply_broadcast]
    _assert_copyable(audit, BRANCH, WHY)
    assert audit.text.endswith(
        "Reason: Wrong supplier_ref: INV_2026_002 &lt;!here&gt; &amp; *not* ours"
    )


async def test_an_answer_quoting_data_shows_it_as_typed(bot: Bot) -> None:
    """The assistant's answer quoting a request's reason is rich_text, so ``INV_2026_001``,
    the path and the markup in it read as typed; its push text pings nobody."""
    await _poison(bot)
    thread = await bot.mention("UARJUN", "show request 1")
    [answer] = [m for m in bot.slack.thread(CHANNEL, thread) if m.user == "UBOT"]
    _assert_copyable(answer, REASON)
    assert "&lt;!channel&gt; &amp; Co" in answer.text and "<!channel>" not in answer.text
