"""The Adaptive Card renderer: safe data, the two views, Teams' size, and one wording with Slack."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.cards.cardspec import CardSpec, pending
from bot.slack.blocks import render_pending
from bot.teams.adaptive import MAX_CARD_BYTES, card_bytes, render
from tests.support.cards import card_record
from tests.teams.adaptive import actions, texts, validate
from tools import CardStatus

NASTY = "**[free](https://evil.example)** <at>Everyone</at> {{DATE(2020-01-01T00:00:00Z)}}"


def spec(*, issued_to: str = "Arjun Mehta", **changes: object) -> CardSpec:
    base = pending(
        card_id="c0ffee",
        summary=f"Set the price of {NASTY}",
        details=(("Product", NASTY), ("Price", "₹100 → ₹120")),
        warning=NASTY,
        expires_at=datetime(2026, 3, 1, 10, 30, tzinfo=UTC),
        token="t" * 120,
        issued_to=issued_to,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_data_goes_only_into_text_runs_and_date_macros_are_broken() -> None:
    """Values from data never sit in markdown TextBlocks, and a typed {{DATE()}} is not expanded."""
    card = render(spec(), view="issuee", issuee="29:1arjun")
    validate(card)
    blocks = [e for e in card["body"] if e["type"] == "TextBlock"]
    assert not [b for b in blocks if "evil" in b["text"] or "Everyone" in b["text"]]
    assert "**[free](https://evil.example)**" in texts(card)
    assert "{{DATE(2020" not in texts(card)
    assert "{\u200b{DATE(2020" in texts(card)


def test_data_in_text_runs_is_exactly_as_typed() -> None:
    """An id, a path, a template placeholder and markdown characters reach the card's TextRuns
    unchanged, so what a person copies from it is what runs; only a date macro Teams would
    expand is broken. Every ``{{`` used to get a zero-width space, so ``{{order_id}}`` copied
    from a card was not the argument that ran."""
    typed = "INV_2026_001 /data/notes_q4.txt {{order_id}} *a* _b_ ~c~ `d` <at>x</at>"
    card = render(spec(details=(("supplier_ref", typed),)), view="issuee", issuee="29:1arjun")
    runs = [
        run["text"]
        for block in card["body"]
        if block["type"] == "RichTextBlock"
        for run in block["inlines"]
    ]
    assert typed in runs, runs
    assert not [b for b in card["body"] if b["type"] == "TextBlock" and "INV_" in b["text"]]


def test_everyone_sees_status_and_the_issuee_sees_buttons() -> None:
    """The same pending card: no buttons for everyone, Approve/Reject and a reason for the
    issuee, Withdraw alone (and no reason) for an asker someone else decides for."""
    everyone = render(spec(), view="everyone", issuee="29:1arjun")
    issuee = render(spec(), view="issuee", issuee="29:1arjun")
    asker = render(spec(), view="asker", issuee="29:1ravi")
    for card in (everyone, issuee, asker):
        validate(card)
    assert actions(everyone) == []
    assert [a["verb"] for a in actions(issuee)] == ["approve", "reject"]
    assert [a["verb"] for a in actions(asker)] == ["withdraw"]
    assert everyone["refresh"]["userIds"] == issuee["refresh"]["userIds"] == ["29:1arjun"]
    assert actions(issuee)[1]["associatedInputs"] == "auto"
    assert actions(issuee)[0]["associatedInputs"] == "none"
    assert not [e for e in asker["body"] if e["type"] == "Input.Text"]


def test_withdraw_is_an_execute_with_a_submit_fallback_carrying_the_token() -> None:
    """Withdraw is an Action.Execute "withdraw" with the card's id and token, and falls back
    to an Action.Submit with the same data on clients without Universal Actions."""
    [withdraw] = actions(render(spec(), view="asker", issuee="29:1ravi"))
    data = {"card": "c0ffee", "token": "t" * 120, "verb": "withdraw"}
    assert (withdraw["type"], withdraw["verb"], withdraw["title"]) == (
        "Action.Execute",
        "withdraw",
        "Withdraw",
    )
    assert withdraw["data"] == data
    assert withdraw["fallback"] == {
        "type": "Action.Submit",
        "title": "Withdraw",
        "style": "default",
        "data": data,
    }


def test_a_card_without_a_reader_id_has_no_refresh() -> None:
    """A private copy (no 29: id known) is sent in its reader's view and asks Teams for no
    refresh, which would need at least one user id."""
    card = render(spec(), view="issuee")
    validate(card)
    assert "refresh" not in card
    assert [a["verb"] for a in actions(card)] == ["approve", "reject"]


def test_the_approvals_line_is_shown_as_data() -> None:
    """A card needing two approvers shows who approved ("1 of 2") in a TextRun, never markdown."""
    progress = f"Approved by {NASTY}, 1 of 2; waiting for a second manager."
    card = render(spec(progress=progress), view="issuee", issuee="29:1meera")
    validate(card)
    assert progress.replace("{{", "{\u200b{") in texts(card)
    assert not [t for t in _text_blocks(card) if "1 of 2" in t]


def test_a_card_not_approved_says_by_whom_when_what_stands_and_why() -> None:
    """A rejected card shows the who line, the time, the note on what still stands and the
    reason; it used to drop the who and the when whenever it had a note."""
    from bot.cards.cardspec import of_record

    at = datetime(2026, 3, 1, 10, 5, tzinfo=UTC)
    record = card_record(
        status=CardStatus.REJECTED,
        decided_by=3,
        decided_by_name="Meera Iyer",
        decided_at=at,
        reason="Budget is frozen",
        standing="request 3 is still pending",
        details=(("Status", "pending → approved"),),
    )
    card = render(of_record(record))
    validate(card)
    shown = texts(card)
    assert shown.startswith("Not approved\n")
    assert "Not approved by Meera Iyer" in shown
    assert "Nothing was changed; request 3 is still pending." in shown
    assert "Reason: Budget is frozen" in shown
    assert "{{TIME(2026-03-01T10:05:00Z)}}" in shown
    assert "pending (approved was proposed)" in shown and "→" not in shown
    assert actions(card) == [] and "refresh" not in card


def test_a_huge_card_stays_within_teams_size_and_cannot_be_approved_in_part() -> None:
    """Fifty long details (a card stored before the engine refused such cards) are cut to fit
    about 28 KB, and the card then has no buttons and says it cannot be approved here: it
    used to keep Approve above "more details not shown", and Approve sent them all."""
    details = tuple((f"Line {i}", "x" * 2000) for i in range(50))
    big = replace(
        spec(),
        details=pending(
            card_id="c", summary="s", details=details, warning=None, expires_at=None
        ).details,
    )
    card = render(big, view="issuee", issuee="29:1arjun")
    validate(card)
    assert card_bytes(card) <= MAX_CARD_BYTES
    assert actions(card) == []
    assert "more details not shown" in texts(card)
    assert "cannot be approved here; nothing was sent" in texts(card)
    assert "refresh" not in card


def test_slack_and_teams_show_the_same_words_and_values() -> None:
    """One spec, two renderers: title, summary and detail values are the same on both."""
    one = spec(warning=None, summary="Approve request #3 (Whitefield)")
    slack = str(render_pending(one, for_user="UARJUN"))
    teams = texts(render(one, view="issuee", issuee="29:1arjun"))
    for words in ("Approval needed", "Approve request #3 (Whitefield)", "₹100 → ₹120"):
        assert words in slack and words in teams


def test_expired_pending_card_renders_as_expired_without_buttons() -> None:
    """A pending card shown after its time has the expired wording and nothing to press."""
    from bot.cards.cardspec import of_record

    at = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
    record = card_record(
        card_id="c",
        summary="Approve request #3",
        created_at=at,
        expires_at=at + timedelta(minutes=30),
    )
    card = render(of_record(record, token="t", now=at + timedelta(hours=1)), view="issuee")
    validate(card)
    assert actions(card) == [] and "Nobody approved this in time" in texts(card)


LINK = "[Approve here](https://evil.example)"


def _text_blocks(element: object) -> list[str]:
    if isinstance(element, dict):
        own = [element["text"]] if element.get("type") == "TextBlock" else []
        return own + [t for value in element.values() for t in _text_blocks(value)]
    if isinstance(element, list):
        return [t for item in element for t in _text_blocks(item)]
    return []


def test_a_persons_name_never_reaches_a_markdown_text_block() -> None:
    """A name like [Approve here](https://evil.example) shows as typed, in a TextRun, in every
    view of a pending card, a decided card and a notice; it never becomes a live link."""
    from bot.cards.cardspec import Decided
    from bot.teams.adaptive import notice_card

    cards = [
        render(spec(issued_to=LINK), view="everyone", issuee="29:1arjun"),
        render(spec(issued_to=LINK), view="issuee", issuee="29:1arjun"),
        render(
            replace(
                spec(issued_to=LINK, actions=()),
                status="rejected",
                decided=Decided("Rejected", LINK, datetime(2026, 3, 1, 10, 0, tzinfo=UTC)),
                note=f"Replaced by {LINK}",
                outcome=("Reason", LINK),
            )
        ),
        render(spec(), issuee="29:1arjun", notice=f"Only {LINK} can decide this."),
        notice_card(f"Only {LINK} can decide this."),
    ]
    for card in cards:
        validate(card)
        assert not [t for t in _text_blocks(card) if "evil.example" in t], card
        assert LINK in texts(card)


def test_a_time_in_a_detail_is_shown_in_the_readers_zone() -> None:
    """A detail holding an engine time ("Closed since: 2026-11-01 10:00 UTC") is shown with
    Teams' DATE and TIME, like the card's expiry, so one card never mixes UTC and local times;
    the label stays a TextRun and a time inside other data is left as typed."""
    details = (("Closed since", "2026-11-01 10:00 UTC"), ("Note", "at 2026-11-01 10:00 UTC"))
    card = render(spec(details=details), issuee="29:1arjun")
    validate(card)
    stamp = "{{DATE(2026-11-01T10:00:00Z, SHORT)}} at {{TIME(2026-11-01T10:00:00Z)}}"
    blocks = [e["text"] for e in card["body"] if e["type"] == "TextBlock"]
    assert stamp in blocks
    assert "Closed since:" in texts(card)
    assert "Note: at 2026-11-01 10:00 UTC" in texts(card)


def test_a_time_in_an_argument_is_shown_as_written() -> None:
    """An argument that is an ISO time ("2026-05-01T10:15:59Z") is shown as the tool will be
    sent it, not as DATE and TIME to the minute: only a time the engine wrote is redrawn."""
    details = (("when", "2026-05-01T10:15:59Z"), ("at", "at 2026-05-01T10:15:59Z"))
    card = render(spec(details=details), issuee="29:1arjun")
    validate(card)
    assert "when: 2026-05-01T10:15:59Z" in texts(card)
    assert "at: at 2026-05-01T10:15:59Z" in texts(card)
    assert "2026-05-01T10:15" not in "".join(
        e["text"] for e in card["body"] if e["type"] == "TextBlock"
    )


def test_hidden_characters_are_marked_on_the_teams_card_and_its_audit_line() -> None:
    """A zero-width space, a right-to-left override and isolates read as marks on the Teams
    card, under a warning saying so, and in the conversation's audit line; they were raw."""
    from bot.teams.texts import audit_text

    made = pending(
        card_id="c",
        summary="Pay a supplier on the odd server.",
        details=(("to", "SUP-\u200b001\u202e"), ("memo", "pay \u2066X\u2069\u00ad")),
        warning=None,
        expires_at=None,
        token="t",
    )
    card = render(made, view="issuee", issuee="29:1arjun")
    validate(card)
    shown = texts(card)
    assert "to: SUP-⟦U+200B⟧001⟦U+202E⟧" in shown
    assert "memo: pay ⟦U+2066⟧X⟦U+2069⟧⟦U+00AD⟧" in shown
    assert "This card holds characters that do not show; they are marked." in shown
    assert not any(c in json.dumps(card, ensure_ascii=False) for c in "\u200b\u202e\u2066")
    line = audit_text("rejected", summary="Pay", by="A\u200bB", reason="no\u202e", outcome=None)
    assert "A⟦U+200B⟧B" in line and "no⟦U+202E⟧" in line and "\u200b" not in line
    assert "they are marked" in line


def test_a_card_that_changed_nothing_shows_no_before_and_after() -> None:
    """A failed or interrupted stock card shows what stays ("52 (12 was proposed)"), never
    "52 → 12" beside "so nothing was changed"; outcome unknown keeps its arrow."""
    from bot.cards.cardspec import of_record

    at = datetime(2026, 3, 1, 10, 5, tzinfo=UTC)
    for status in (CardStatus.FAILED, CardStatus.INTERRUPTED):
        record = card_record(
            status=status,
            decided_by=3,
            decided_by_name="Meera Iyer",
            decided_at=at,
            outcome="Stock of FF-PANEER-WRAP changed, so nothing was changed",
            details=(("Quantity", "52 → 12"),),
        )
        shown = texts(render(of_record(record)))
        assert "52 (12 was proposed)" in shown and "→" not in shown, status
    unknown = card_record(status=CardStatus.UNKNOWN, details=(("Quantity", "52 → 12"),))
    assert "52 → 12" in texts(render(of_record(unknown)))


def test_a_rejected_stock_card_says_reason_once() -> None:
    """A stock card's own "Reason" detail and why it was rejected are told apart: it showed
    two "Reason:" lines."""
    from bot.cards.cardspec import of_record

    record = card_record(
        tool="adjust_stock",
        status=CardStatus.REJECTED,
        decided_by=3,
        decided_by_name="Meera Iyer",
        decided_at=datetime(2026, 3, 1, 10, 5, tzinfo=UTC),
        reason="Over budget",
        details=(("Quantity", "52 → 12"), ("Reason", "delivery arrived")),
    )
    shown = texts(render(of_record(record)))
    assert shown.count("Reason:") == 1
    assert "Why it was not approved: Over budget" in shown


def test_plain_text_notices_show_no_markup_and_refusals_start_alike() -> None:
    """Teams sends notices as plain text: the not-linked and not-connected ones showed their
    commands in literal backticks; the not-your-card notice had no ⛔ where others do."""
    from bot.teams import texts as words

    assert "`" not in words.not_linked() and "`" not in words.not_connected()
    assert words.not_linked().endswith(
        "countersign link teams <tenant-id> <your-aad-object-id> <email>"
    )
    assert words.not_your_card("Arjun Mehta").startswith("⛔ This approval belongs to Arjun Mehta")
    assert words.not_your_card(None, ("Arjun Mehta", "Meera Iyer")).startswith(
        "⛔ This card is waiting for Arjun Mehta or Meera Iyer, not for you"
    )
