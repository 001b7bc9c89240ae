"""What a Slack card says: whom it waits for, each fact once, times in the reader's zone, whole cards in lists."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.cards.card import one
from bot.cards.cardspec import CardSpec, Decided, pending
from bot.placement import SlackPlacement
from bot.slack.adapter import SlackAdapter, Where
from bot.slack.blocks import reject_modal, render_decided, render_pending
from bot.slack.lists import home_view, pending_list
from bot.slack.texts import esc_data, reply
from tests.slack.conftest import CHANNEL, Bot, rich_said
from tests.slack.conftest import said as card_said
from tests.support.cards import card_record
from tools import CardStatus

AT = datetime(2026, 11, 30, 2, 8, tzinfo=UTC)
TOKEN_OF = re.compile(r"<!date\^(\d+)\^\{date_short_pretty\} at \{time\}\|[^>]+>")


def _texts(blocks: list[dict[str, Any]]) -> str:
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                out.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(blocks)
    return "\n".join(out)


def _card(n: int, *, details: int = 4) -> CardSpec:
    return pending(
        card_id=f"card{n}",
        summary=f"Approve request {n} — a discount for Whitefield.",
        details=tuple((f"Label {i}", f"value {i}") for i in range(details)),
        warning="This is a large amount." if n % 2 else None,
        expires_at=AT + timedelta(minutes=n),
        token=f"token-{n}-" + "x" * 60,
    )


def test_the_heading_names_whom_the_card_waits_for() -> None:
    """Who may press is in the header, driven by the spec's ``waiting_for`` (one or several
    people), so Meera knows before pressing that Arjun's card is not hers."""
    one = pending(
        card_id="c1",
        summary="Approve request 1.",
        details=(),
        warning=None,
        expires_at=AT,
        token="t" * 40,
        issued_to="Arjun Mehta",
    )
    blocks = render_pending(one, for_user="UARJUN")
    assert blocks[0] == {**blocks[0], "type": "header"}
    assert blocks[0]["text"]["text"] == "Approval needed from Arjun Mehta"
    several = replace(one, waiting_for=("Arjun Mehta", "Meera Iyer"))
    assert pending(
        card_id="c1",
        summary="s",
        details=(),
        warning=None,
        expires_at=AT,
        waiting_for=several.waiting_for,
    ).title == ("Approval needed from Arjun Mehta or Meera Iyer")
    # The line under the fields is the expiry alone, in each reader's time zone.
    context = blocks[-2]["elements"][0]["text"]
    assert context.startswith("Expires <!date^") and "For " not in context


def test_a_settled_card_says_who_decided_once() -> None:
    """ "Approved by Arjun Mehta (@Arjun Mehta)" and "Outcome: done. Request 1 was approved by
    Arjun Mehta" said the same thing three times: now one line says who, when and what."""
    base = replace(
        pending(card_id="c1", summary="Refund order 12.", details=(), warning=None, expires_at=AT),
        status="done",
        title="Approved and done",
        actions=(),
    )
    named = replace(
        base,
        decided=Decided("Approved", "Arjun Mehta", AT, in_outcome=True),
        outcome=("", "Request 1 was approved by Arjun Mehta."),
    )
    line = rich_said(render_decided(named, decided_by_slack="UARJUN")[-1])
    assert TOKEN_OF.fullmatch(line.split(" · ")[1]), line
    assert line.startswith("Request 1 was approved by Arjun Mehta · ")
    assert "\n" not in line and "<@UARJUN>" not in line and "Outcome" not in line
    other = replace(
        base,
        decided=Decided("Approved", "Arjun Mehta", AT),
        outcome=("", "Refunded ₹250.00 on order 12."),
    )
    lines = rich_said(render_decided(other, decided_by_slack="UARJUN")[-1])
    first, second = lines.split("\n")
    assert first.startswith("Approved by <@UARJUN> · <!date^") and "Arjun Mehta" not in first
    assert second == "Refunded ₹250.00 on order 12."


def test_utc_times_in_data_and_replies_become_slack_date_tokens() -> None:
    """An engine stamp, an ISO time and the offline model's "30 Nov 2026, 02:08 UTC" all show in
    each reader's own zone; the token is built from digits only, and data around it stays inert."""
    unix = int(AT.timestamp())
    for said in ("2026-11-30 02:08 UTC", "2026-11-30T02:08+00:00", "30 Nov 2026, 02:08 UTC"):
        shown = esc_data(f"Closed since {said} <!channel>")
        assert f"<!date^{unix}^" in shown, shown
        assert "<!channel>" not in shown and "&lt;!channel&gt;" in shown
        assert TOKEN_OF.search(reply(f"Created at: {said}"))
    assert "<!date" not in esc_data("Order 12 — Asha, 2026-11-29")  # a date alone has no zone


def test_a_time_in_the_merchants_named_zone_becomes_a_slack_date_token() -> None:
    """ "2026-11-30 07:38 Asia/Kolkata" (how the engine writes a merchant's time) is the same
    instant as 02:08 UTC and shows in each reader's own zone too; a zone-like word that names
    no zone is left as typed."""
    unix = int(AT.timestamp())
    assert f"<!date^{unix}^" in reply("Orders since 2026-11-30 07:38 Asia/Kolkata.")
    assert "<!date" not in reply("Orders since 2026-11-30 07:38 Nowhere/Atall.")


def test_a_time_after_at_reads_once_and_refusals_show_times_as_tokens() -> None:
    """ "…approved by Arjun Mehta at <token>" read "at today at 8:16 PM": the "at" goes with
    the token, which says it itself; and a refusal's UTC time is a token like the card's, not
    "2026-12-01 20:19 UTC" under a card saying "today at 8:19 PM"."""
    from bot.slack.texts import refused

    unix = int(AT.timestamp())
    shown = reply("Request 1 was already approved by Arjun Mehta at 2026-11-30 02:08 UTC.")
    assert f"approved by Arjun Mehta <!date^{unix}^" in shown
    said = refused("This card was already approved by Meera Iyer at 2026-11-30 02:08 UTC.")
    assert said.startswith(":no_entry: This card was already approved by Meera Iyer <!date^")
    assert " UTC." not in said.replace("02:08 UTC>", "")


def test_a_long_list_shows_whole_cards_then_how_many_more() -> None:
    """With eleven cards waiting, the list stops before Slack's 50 blocks at a card's end: every
    card shown has its buttons and expiry, and a note says how many more and how to see them."""
    cards = [_card(n) for n in range(1, 12)]
    blocks = pending_list(cards)
    assert len(blocks) <= 50
    for raw in blocks:
        assert Block.parse(raw) is not None
    shown = sum(1 for b in blocks if b["type"] == "divider")
    assert 1 <= shown < 11
    assert sum(1 for b in blocks if b["type"] == "actions") == shown
    assert _texts(blocks).count("Expires <!date^") == shown
    assert blocks[-1]["type"] == "section"
    note = blocks[-1]["text"]["text"]
    assert note.startswith(f"*{11 - shown} more* are waiting for you.")
    assert f"`/countersign pending {shown + 1}`" in note
    assert f"1–{shown} shown" in blocks[0]["text"]["text"]
    rest = pending_list(cards, start=shown)
    assert sum(1 for b in rest if b["type"] == "actions") == 11 - shown
    assert "more*" not in _texts(rest)


def test_the_app_home_holds_whole_cards_within_its_limit() -> None:
    """The Home tab (100 blocks) lists whole cards and says how many more wait."""
    view = home_view([_card(n, details=12) for n in range(1, 30)])
    blocks = view["blocks"]
    assert len(blocks) <= 100
    dividers = sum(1 for b in blocks if b["type"] == "divider") - 1  # the intro's divider
    assert sum(1 for b in blocks if b["type"] == "actions") == dividers
    assert "more* are waiting for you" in blocks[-1]["text"]["text"]


def test_the_reject_modal_says_what_is_rejected_and_that_a_reason_is_optional() -> None:
    """The modal names the change and says the reason may be left empty (it was "Reject this
    card" over a bare summary, and an empty reason seemed to submit into nothing)."""
    modal = reject_modal(token="t", channel="C1", thread_ts=None, summary="Refund order 12.")
    assert modal["title"]["text"] == "Reject this change"
    said = rich_said(modal["blocks"][0])
    assert "You are rejecting this change" in said and "Refund order 12." in said
    reason = modal["blocks"][1]
    assert reason["optional"] is True
    assert "(optional)" in reason["label"]["text"]
    assert "Leave it empty" in reason["hint"]["text"]


class _GoneChannel:
    """A Web API client whose chat.update answers channel_not_found; posts are recorded."""

    def __init__(self) -> None:
        self.posted: list[dict[str, Any]] = []

    async def chat_update(self, **_: Any) -> None:
        response = AsyncSlackResponse(
            client=None,
            http_verb="POST",
            api_url="chat.update",
            req_args={},
            data={"ok": False, "error": "channel_not_found"},
            headers={},
            status_code=200,
        )
        raise SlackApiError("channel_not_found", response)

    async def chat_postMessage(self, **kwargs: Any) -> dict[str, str]:
        self.posted.append(kwargs)
        return {"ok": "true", "channel": "D0ARJUN", "ts": "1800000001.000001"}


async def test_a_card_whose_channel_is_gone_goes_to_its_issuee() -> None:
    """chat.update answering channel_not_found posts the decided card to the person it was
    issued to (their DM) and returns that new place, instead of failing silently."""
    client = _GoneChannel()
    adapter = SlackAdapter(cast("Any", client), Where("T1", "UARJUN"))
    now = datetime(2026, 11, 30, 2, 8, tzinfo=UTC)
    record = card_record(
        card_id="c1",
        summary="Approve request 1.",
        status=CardStatus.DONE,
        created_at=now,
        expires_at=now,
        decided_by=2,
        decided_by_name="Arjun Mehta",
        decided_at=now,
        outcome="Request 1 was approved by Arjun Mehta.",
    )
    gone = SlackPlacement(team="T1", channel="C0GONE", ts="1.0", thread_ts="0.9", user="UARJUN")
    anew = await adapter.update(one(record), gone)
    assert [p["channel"] for p in client.posted] == ["UARJUN"]
    assert "Approved and done" in str(client.posted[0]["blocks"])
    assert anew == gone.model_copy(
        update={"channel": "D0ARJUN", "ts": "1800000001.000001", "thread_ts": None}
    )


async def test_show_request_reads_with_the_cards_labels(bot: Bot) -> None:
    """ "show request 1" names its fields as request 1's card does: "stock purchase", "Asked
    by", "Their reason"; it said "Kind: stock", "Requested by" and "Reason"."""
    thread = await bot.mention("UARJUN", "show request 1")
    [answer] = [m for m in bot.slack.thread(CHANNEL, thread) if m.user == "UBOT"]
    await bot.mention("UARJUN", "approve request 1")
    [card] = bot.cards()
    shown, on_card = answer.text, card_said(card.blocks)
    for words in ("stock purchase", "Asked by", "Their reason"):
        assert words in shown and words in on_card, (words, shown)
    for old in ("Kind: stock\n", "Requested by", "\nReason:"):
        assert old not in shown, shown
