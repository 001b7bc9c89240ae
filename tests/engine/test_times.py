"""The one time formatter (``tools.times``): every time a person reads in one form, with its zone's name."""

from __future__ import annotations

from datetime import UTC, datetime

from tools import find_times, in_zone, time_of, time_stamp

AT = datetime(2026, 12, 1, 20, 19, tzinfo=UTC)


def test_a_time_is_written_in_one_form_with_its_zones_name() -> None:
    """UTC and a merchant's zone read alike, each named; an unknown zone falls back to UTC,
    named as UTC (never a clock labelled with a zone it is not in)."""
    assert time_stamp(AT) == "2026-12-01 20:19 UTC"
    assert time_stamp(AT, "Asia/Kolkata") == "2026-12-02 01:49 Asia/Kolkata"
    assert time_stamp(AT, "America/New_York") == "2026-12-01 15:19 America/New_York"
    assert time_stamp(AT, "Not/AZone") == "2026-12-01 20:19 UTC"


def test_text_shown_as_typed_carries_its_times_in_the_merchants_zone() -> None:
    """A refusal's "at 2026-12-01 20:19 UTC" and the offline model's older "1 Dec 2026, 20:19
    UTC" are both written in the merchant's zone, "at" kept; a date alone is left."""
    said = "Approved by Arjun Mehta at 2026-12-01 20:19 UTC; asked 1 Dec 2026, 20:19 UTC."
    assert in_zone(said, "Asia/Kolkata") == (
        "Approved by Arjun Mehta at 2026-12-02 01:49 Asia/Kolkata; asked 2026-12-02 01:49 "
        "Asia/Kolkata."
    )
    assert in_zone("Order 12 — Asha, 2026-11-29", "Asia/Kolkata") == "Order 12 — Asha, 2026-11-29"


def test_every_form_is_read_back_as_the_same_instant() -> None:
    """The engine's stamp, ISO at UTC and a named zone all read as one aware UTC instant."""
    for said in ("2026-12-01 20:19 UTC", "2026-12-01T20:19+00:00", "2026-12-02 01:49 Asia/Kolkata"):
        assert time_of(said) == AT, said
        assert list(find_times(f"since {said}.")) == ["since ", AT, "."]
    assert time_of("at 2026-12-01 20:19 UTC") is None  # a detail that is more than a time
