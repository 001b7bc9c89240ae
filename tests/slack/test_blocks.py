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


def _inert(text: str) -> None:
    for live in ("<!channel>", "<https://", "*bold*", "_slanted_", "~struck~", "`code`"):
        assert live not in text, text


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
        assert texts and all(t.get("verbatim") is True for t in texts)
        for text in texts:
            _inert(text["text"])
    assert "evil.example" in str(pending_blocks)


def test_notification_and_audit_texts_escape_the_same_way() -> None:
    """The push text and the channel's audit line are mrkdwn too: the same data stays inert."""
    for text in (
        card_text(NASTY, NASTY),
        notification(f"{NASTY} needs your approval: {NASTY}"),
        decided_text("rejected", NASTY, NASTY, NASTY),
        audit_text("rejected", summary=NASTY, by=NASTY, standing=NASTY, reason=NASTY, outcome=None),
        audit_text("failed", summary=NASTY, by=NASTY, standing=None, reason=None, outcome=NASTY),
    ):
        _inert(text)
