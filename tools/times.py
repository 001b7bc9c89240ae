"""The one formatter of the times people read, and the reader of the times text carries; never fetches a zone.

Every time a person reads is written by ``time_stamp``: "2026-12-01 20:19 UTC", or in a named zone
"2026-12-02 01:49 Asia/Kolkata", always with the zone's name, so no reader takes one zone's
clock for another's. Text the engine, the model or a surface writes carries times in that one
form; a surface that can show each reader their own zone finds them with ``find_times`` (Slack's
date tokens, Teams cards' DATE and TIME), and one that cannot shows them in the merchant's zone
with ``in_zone`` (Teams plain text). People once read "at today at 8:16 PM", "2026-12-01 20:19
UTC" beside "today at 8:19 PM", and "1 Mar 2026, 10:05 UTC": three formats for one clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["engine_time", "find_times", "in_zone", "time_of", "time_stamp", "zone_of"]

_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
# The forms text carries a time in: ``time_stamp``'s ("2026-11-30 02:08 UTC", "2026-11-30 07:38
# Asia/Kolkata"), ISO 8601 at UTC ("2026-11-30T02:08+00:00", what reads hand the model) and
# the offline model's older "30 Nov 2026, 02:08 UTC". A time naming no zone could be anyone's
# and is left as it is. An "at " or "on " before the time goes with it: a reader's own
# rendering says "today at 8:16 PM" itself, and "approved by Arjun Mehta at today at 8:16 PM"
# is what keeping it read like.
_STAMP = re.compile(
    r"(?P<lead>\b(?:at|on) )?"
    r"(?:(?P<iso>\d{4}-\d{2}-\d{2})[ T](?P<hm>\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?"
    r"(?: (?P<zone>UTC|[A-Z][A-Za-z_]+(?:/[A-Za-z0-9_+-]+)+)|Z|\+00:00)"
    rf"|(?P<day>\d{{1,2}}) (?P<mon>{_MONTHS}) (?P<year>\d{{4}}), (?P<hm2>\d{{2}}:\d{{2}}) UTC)"
)


def zone_of(name: str) -> tzinfo:
    """The zone a name stands for; UTC for a name this machine does not know."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def time_stamp(at: datetime, zone: str = "UTC") -> str:
    """A time as a person reads it where nothing shows their own zone, with the zone's name."""
    shown = at.astimezone(zone_of(zone))
    return f"{shown:%Y-%m-%d %H:%M} {zone if shown.tzinfo is not UTC else 'UTC'}"


def _at(found: re.Match[str]) -> datetime | None:
    if not found["iso"]:
        text = f"{found['day']} {found['mon']} {found['year']} {found['hm2']}"
        return datetime.strptime(text, "%d %b %Y %H:%M").replace(tzinfo=UTC)
    naive = datetime.strptime(f"{found['iso']} {found['hm']}", "%Y-%m-%d %H:%M")
    name = found["zone"] or "UTC"
    if name == "UTC":
        return naive.replace(tzinfo=UTC)
    try:
        return naive.replace(tzinfo=ZoneInfo(name)).astimezone(UTC)
    except (ZoneInfoNotFoundError, ValueError):
        return None  # a word that looks like a zone and is none: left as written


def find_times(text: str) -> Iterator[str | datetime]:
    """``text`` cut at the times in it: the words between them, and each time (aware, UTC)."""
    start = 0
    for found in _STAMP.finditer(text):
        at = _at(found)
        if at is None:
            continue
        if found.start() > start:
            yield text[start : found.start()]
        yield at
        start = found.end()
    if start < len(text):
        yield text[start:]


def time_of(text: str) -> datetime | None:
    """The time ``text`` is, when it is nothing but one (a card's detail), else None."""
    found = _STAMP.fullmatch(text.strip())
    return _at(found) if found is not None and not found["lead"] else None


# ``time_stamp``'s own form and nothing else: no "T", no seconds, no "Z", the zone named.
_ENGINE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} (?:UTC|[A-Z][A-Za-z_]+(?:/[A-Za-z0-9_+-]+)+)")


def engine_time(text: str) -> datetime | None:
    """The time ``text`` is when it is wholly one ``time_stamp`` wrote, else None.

    A card's detail is a value as the tool will be sent it, shown as typed; only a time the
    engine itself wrote there ("Closed since: 2026-11-01 10:00 UTC") is shown in the reader's
    zone. An argument "at 2026-05-01T10:15:59Z" was once drawn as "today at 3:45 PM": its
    "at" and its seconds were gone from what the person read.
    """
    return time_of(text) if _ENGINE.fullmatch(text) else None


def in_zone(text: str, zone: str) -> str:
    """``text`` with every time in it written in ``zone``, named (for text shown as typed)."""

    def written(found: re.Match[str]) -> str:
        at = _at(found)
        return found[0] if at is None else f"{found['lead'] or ''}{time_stamp(at, zone)}"

    return _STAMP.sub(written, text)
