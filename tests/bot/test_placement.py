"""Card placements: rows stored before they were typed still load; one copy is stored as before."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from bot.placement import (
    ListPlacement,
    SlackPlacement,
    TeamsPlacement,
    first,
    lists_of_stored,
    placements_of,
    placements_of_stored,
    stored,
)
from tests.support.cards import card_record

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CARD = card_record(expires_at=AT)

# Exactly what the Slack and Teams surfaces stored before placements were typed.
OLD_SLACK: dict[str, Any] = {
    "platform": "slack",
    "team": "T0FIESTA",
    "channel": "C0OPS",
    "thread_ts": "1800000000.000001",
    "user": "UARJUN",
    "conversation": "T0FIESTA:C0OPS:1800000000.000001",
    "ts": "1800000000.000002",
    "token": "signed",
}
OLD_TEAMS: dict[str, Any] = {
    "platform": "teams",
    "tenant": "tenant-1",
    "service_url": "https://smba.example/",
    "conversation_id": "19:ops;messageid=1",
    "activity_id": "1700000000002",
    "user": "29:1arjun",
    "aad": "aad-0002-arjun",
    "issued_to": "Arjun Mehta",
    "conversation": "teams:tenant-1:19:ops;messageid=1",
    "token": "signed",
}


def test_old_rows_load_as_typed_placements() -> None:
    """A card stored with the old string keys loads as its surface's placement, every value kept."""
    [slack] = placements_of(replace(CARD, posting=OLD_SLACK))
    assert isinstance(slack, SlackPlacement)
    assert (slack.channel, slack.ts, slack.user, slack.owner) == (
        "C0OPS",
        "1800000000.000002",
        "UARJUN",
        "UARJUN",
    )
    [teams] = placements_of(replace(CARD, posting=OLD_TEAMS))
    assert isinstance(teams, TeamsPlacement)
    assert (teams.activity_id, teams.owner, teams.token) == (
        "1700000000002",
        "Arjun Mehta",
        "signed",
    )


def test_one_copy_is_stored_with_the_old_keys() -> None:
    """One placement is stored flat with exactly the keys (and values) an older process reads."""
    for old in (OLD_SLACK, OLD_TEAMS):
        [placement] = placements_of(replace(CARD, posting=old))
        assert stored([placement]) == old


def test_several_copies_round_trip_in_order() -> None:
    """A card with copies on both surfaces keeps them all, in order; each surface finds its own."""
    copies = [
        *placements_of(replace(CARD, posting=OLD_TEAMS)),
        *placements_of(replace(CARD, posting=OLD_SLACK)),
    ]
    record = replace(CARD, posting=stored(copies))
    assert placements_of(record) == tuple(copies)
    assert first(record, "slack") == copies[1]


def test_unknown_or_missing_places_show_nothing() -> None:
    """No surface, or a platform this build does not know, yields no placement rather than an error."""
    assert placements_of(replace(CARD, posting=None)) == ()
    assert placements_of(replace(CARD, posting={"platform": "matrix", "room": "!a"})) == ()
    assert first(replace(CARD, posting=OLD_TEAMS), "slack") is None


def test_a_private_list_is_kept_beside_the_copies_and_is_no_copy() -> None:
    """A ``/countersign pending`` list is stored under ``lists`` beside one flat copy: the
    copy reads back alone (an older process sees only it), the list reads back whole."""
    copy = SlackPlacement.model_validate(OLD_SLACK)
    listed = ListPlacement(
        installation="T0FIESTA", user="UMEERA", person=3, url="https://hooks/x", until=AT
    )
    kept = stored([copy], [listed])
    assert {k: v for k, v in kept.items() if k != "lists"} == OLD_SLACK
    assert placements_of_stored(kept) == (copy,)
    assert lists_of_stored(kept) == (listed,)
    assert lists_of_stored({"lists": [{"url": 1}]}) == ()
