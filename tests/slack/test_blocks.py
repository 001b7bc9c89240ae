"""The Block Kit renderer: data on a card never pings, links or restyles anything."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from slack_sdk.models.blocks import Block

from bot.cards.cardspec import Decided, pending
from bot.slack.blocks import reject_modal, render_decided, render_pending
from bot.slack.lists import pending_list
from bot.slack.texts import audit_text, card_text, decided_text, notification

NASTY = (
    "<!channel> <https://evil.example|Approve here> *bold* _slanted_ ~struck~ `code` "
    "https://evil.example/pay"
)
AT = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)


def _mrkdwn(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        own = [node] if node.get("type") == "mrkdwn" else []
        return own + [m for value in node.values() for m in _mrkdwn(value)]
    if isinstance(node, list):
        return [m for item in node for m in _mrkdwn(item)]
    return []


TOKENS = ("<!channel>", "<https://")
STYLED = ("*bold*", "_slanted_", "~struck~", "`code`")


def _inert(text: str) -> None:
    for live in (*TOKENS, *STYLED):
        assert live not in text, text


def _literal(node: Any) -> list[str]:
    """The texts Slack shows as typed: plain_text objects and rich_text ``text`` elements."""
    if isinstance(node, dict):
        own = [node["text"]] if node.get("type") in {"plain_text", "text"} else []
        return own + [t for value in node.values() for t in _literal(value)]
    if isinstance(node, list):
        return [t for item in node for t in _literal(item)]
    return []


def _spec() -> Any:
    return pending(
        card_id="c0ffee",
        summary=f"Refund order 12 for {NASTY}",
        details=(("Customer", NASTY), ("Note", NASTY)),
        warning=NASTY,
        expires_at=AT,
        token="t" * 40,
        issued_to=NASTY,
        waiting_for=(NASTY, "Meera Iyer"),
        role="manager",
        routed=True,
        progress=f"Approved by {NASTY}, 1 of 2; waiting for a second manager.",
    )


def test_data_in_a_pending_and_a_decided_card_is_inert() -> None:
    """Names, notes and reasons holding a mention, a link, a bare URL or *bold*/_/~/` markup
    render as typed: nothing pings, nothing links (verbatim), nothing restyles the card, its
    approvals line, whom it waits for in a list, or what a card that did not run left as it was."""
    pending_blocks = render_pending(_spec(), for_user="UARJUN")
    decided = replace(
        _spec(),
        status="rejected",
        actions=(),
        decided=Decided("Not approved", NASTY, AT),
        outcome=("Reason", NASTY),
        note=f"Nothing was changed; {NASTY} is still pending.",
    )
    decided_blocks = render_decided(decided, decided_by_slack=None)
    modal = reject_modal(token="t", channel="C1", thread_ts=None, summary=NASTY)
    listed = pending_list([_spec()], [_spec()])
    assert "Approved by" in str(pending_blocks) and "Waiting for" in str(listed)
    assert "Nothing was changed;" in str(decided_blocks)
    for blocks in (pending_blocks, decided_blocks, modal["blocks"], listed):
        for block in blocks:
            assert Block.parse(block) is not None
        texts = _mrkdwn(blocks)
        assert all(t.get("verbatim") is True for t in texts)
        for text in texts:
            _inert(text["text"])
        assert any(NASTY in t for t in _literal(blocks)), _literal(blocks)
    assert "evil.example" in str(pending_blocks)


def test_notification_and_audit_texts_escape_the_same_way() -> None:
    """The push text and the channel's audit line's text are mrkdwn too: the same data pings
    and links nobody, and its other characters are carried as typed (no look-alikes)."""
    for text in (
        card_text(NASTY, NASTY),
        notification(f"{NASTY} needs your approval: {NASTY}"),
        decided_text("rejected", NASTY, NASTY, NASTY),
        audit_text("rejected", summary=NASTY, by=NASTY, standing=NASTY, reason=NASTY, outcome=None),
        audit_text("failed", summary=NASTY, by=NASTY, standing=None, reason=None, outcome=NASTY),
    ):
        assert not any(live in text for live in TOKENS), text
        assert all(styled in text for styled in STYLED), text
