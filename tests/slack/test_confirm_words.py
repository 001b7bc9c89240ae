"""What a card's confirm dialogs say before a press is sent: whether it runs, whose card it is, what it approves."""

from __future__ import annotations

from typing import Any

import pytest

from bot.cards import several
from bot.cards.cardspec import of_record
from bot.slack.blocks import render_pending
from tests.support.cards import AT, card_record
from tools.cards.record import Approval, Issuee

ARJUN, MEERA = Issuee(2, "Arjun Mehta"), Issuee(3, "Meera Iyer")


def _dialog(blocks: list[dict[str, Any]], action: str) -> dict[str, Any]:
    for block in blocks:
        for element in block.get("elements", ()):
            if element.get("action_id") == action:
                return dict(element["confirm"])
    raise AssertionError(f"no {action} button")


def _approve_dialog(**changes: Any) -> str:
    """The Approve dialog a copy read by one person who may approve it draws for them."""
    spec = of_record(card_record(**changes), token="t", editable=False)
    blocks = render_pending(spec, for_user=None, reader_approves=True)
    return str(_dialog(blocks, "card_approve")["text"]["text"])


def test_the_first_of_two_approvers_is_not_told_it_runs() -> None:
    """A card needing two approvals tells its reader the press counts as 1 of 2 and runs
    nothing yet; Meera, the first of two, was told "This runs as soon as you confirm" and only
    1 of 2 was recorded. The second approver is told it runs."""
    said = _approve_dialog(issued_to=(ARJUN, MEERA), approvals_needed=2, routed=True)
    assert said.startswith(
        "Your approval counts as 1 of the 2 needed from different people; nothing runs until then."
    )
    assert "runs as soon as" not in said
    second = _approve_dialog(
        issued_to=(ARJUN, MEERA),
        approvals_needed=2,
        approvals=(Approval(3, "Meera Iyer", AT),),
        routed=True,
    )
    assert second.startswith("It runs as soon as you confirm") and "1 of the 2" not in second


def test_the_approve_dialog_is_drawn_only_for_a_reader_who_may_approve() -> None:
    """Slack draws a button's dialog for whoever presses it: a channel's copy (anyone may
    press) carries none, and Meera no longer confirms Arjun's card only to be refused; the
    dialog of a copy its reader may approve says it runs when they confirm, in their words."""
    spec = of_record(card_record(issued_to=(ARJUN,)), token="t", editable=False)
    with pytest.raises(KeyError):
        _dialog(render_pending(spec, for_user=None), "card_approve")
    said = _approve_dialog(issued_to=(ARJUN,))
    assert said.startswith("It runs as soon as you confirm, checked again first.")
    assert "Only Arjun Mehta" not in said and "they confirm" not in said
    assert said.endswith("Approve request 3.")


def test_a_batch_dialog_lists_whole_summaries_and_how_many_more() -> None:
    """The batch dialog fits Slack's 300 characters by naming each write by its head when the
    summaries overflow, and past that leaves heads out whole, saying how many; it was cut
    mid-word ("…expense for Kor…")."""
    summaries = [f"Approve request {n} — a ₹2,300.00 expense for Koramangala" for n in range(6)]
    said = several.confirm_text(summaries, left=2, waiting=("Arjun Mehta", "Meera Iyer"))
    assert len(said) <= 300
    assert said.startswith("Only Arjun Mehta or Meera Iyer can approve these. Each approval")
    assert "counts as 1 of the 2 needed" in said
    assert said.endswith(
        "Approve request 0; Approve request 1; Approve request 2; "
        "Approve request 3; Approve request 4; Approve request 5."
    )
    many = several.confirm_text([f"Approve request {n} — for X" for n in range(20)])
    assert len(many) <= 300 and many.endswith("more.") and "Approve request 1;" in many
    assert several.confirm_text(summaries[:2]).startswith("Each runs on its own as soon as you")
    two = several.confirm_text(summaries[:2])
    assert two.endswith("Approve request 1 — a ₹2,300.00 expense for Koramangala.")
    alone = several.confirm_text(summaries[:2], waiting=("Arjun Mehta",))
    assert alone.startswith("Only Arjun Mehta can approve these; each runs on its own as soon")


def test_a_batch_of_two_is_approved_as_both_and_never_claims_one_approval() -> None:
    """Two changes are "Approve both"; the batch's line no longer says "one approval" beside
    "Needs 2 approvals from different people"."""
    assert several.approve_all(2) == "Approve both"
    assert several.confirm_title(2) == "Approve both changes?"
    assert several.approve_all(3) == "Approve all 3"
    assert (several.reject_all(2), several.reject_all(3)) == ("Reject both", "Reject all 3")
    assert "one approval" not in several.intro(3)


def test_withdraw_asks_about_the_card_not_the_request() -> None:
    """Withdrawing ends a card: its dialog asks "Withdraw this card?", not "this request"."""
    spec = of_record(card_record(), token="t", editable=False)
    dialog = _dialog(render_pending(spec, for_user=None), "card_withdraw")
    assert dialog["title"]["text"] == "Withdraw this card?"


def test_a_batch_item_whose_outcome_is_unknown_never_says_nothing_was_changed() -> None:
    """An MCP write of a card of several whose process stopped while its call was with the
    server reads "outcome unknown" with what to do, like the card of one: it read "Outcome
    unknown: nothing was changed", a guess that could send the money twice."""
    note = "outcome unknown: the service stopped during the change; check before trying again"

    line = several.item_result("outcome_unknown", note)

    assert (
        line == "Outcome unknown: the service stopped during the change; check before trying again."
    )
    assert several.item_result("interrupted", None) == "Interrupted: nothing was changed"
