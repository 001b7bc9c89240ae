"""Keeps data from becoming Slack tokens in mrkdwn and finds the UTC times in it; never words anything.

Data a person may copy (ids, SKUs, paths, amounts, names, notes, arguments) is not placed in
mrkdwn at all: it goes in plain_text or rich_text, which Slack shows as typed
(``bot.slack.rich``). What mrkdwn still carries — our own words, mentions, times, and the
``text`` of a message, which is its push notification — goes through ``esc`` wherever it holds
data: a branch named ``<!channel>`` must ping nobody, and ``&`` must not start an entity.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime

__all__ = ["esc", "esc_data", "mention", "stamps", "timed", "when"]


# Slack's own escapes, and the only ones it has: Slack shows &amp; &lt; &gt; as the characters
# they stand for, so the push text and a copy of it read as typed. mrkdwn has no escape for
# its styling characters (* _ ~ `); they used to become look-alikes (ˍ ∗ ∼ ˋ), and what a
# person copied from a card (supplier_ref: INV_2026_001) was then not the string that ran.
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def esc(text: str) -> str:
    """Data made inert in mrkdwn: ``&``, ``<`` and ``>`` escaped, everything else as typed.

    A branch named ``<!channel>`` pings nobody and ``<https://x|Approve here>`` is no link.
    Bare URLs are kept from linking by ``verbatim`` on the block's text.
    """
    return text.translate(_ESCAPES)


def when(at: datetime) -> str:
    """A time every reader sees in their own time zone, with a UTC fallback for old clients."""
    return f"<!date^{int(at.timestamp())}^{WHEN_FORMAT}|{fallback(at)}>"


WHEN_FORMAT = "{date_short_pretty} at {time}"


def fallback(at: datetime) -> str:
    """A time as a client that cannot show it in the reader's zone shows it."""
    return f"{at:%Y-%m-%d %H:%M} UTC"


# The times the engine and the offline model write into text: "2026-11-30 02:08 UTC",
# "2026-11-30T02:08+00:00", "30 Nov 2026, 02:08 UTC". Only ones that name UTC are read: a time
# without a zone could be anyone's.
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
# An "at " or "on " before the time goes with it: the token says "today at 8:16 PM" itself,
# and "approved by Arjun Mehta at today at 8:16 PM" is what keeping it read like.
_STAMP = re.compile(
    r"(?:\b(?:at|on) )?"
    r"(?:(?P<iso>\d{4}-\d{2}-\d{2})[ T](?P<hm>\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(?: UTC|Z|\+00:00)"
    rf"|(?P<day>\d{{1,2}}) (?P<mon>{_MONTHS}) (?P<year>\d{{4}}), (?P<hm2>\d{{2}}:\d{{2}}) UTC)"
)


def _at(found: re.Match[str]) -> datetime:
    if found["iso"]:
        at = datetime.strptime(f"{found['iso']} {found['hm']}", "%Y-%m-%d %H:%M")
    else:
        text = f"{found['day']} {found['mon']} {found['year']} {found['hm2']}"
        at = datetime.strptime(text, "%d %b %Y %H:%M")
    return at.replace(tzinfo=UTC)


def stamps(text: str) -> Iterator[str | datetime]:
    """``text`` cut at the UTC times in it: the words between them, and each time."""
    start = 0
    for found in _STAMP.finditer(text):
        if found.start() > start:
            yield text[start : found.start()]
        yield _at(found)
        start = found.end()
    if start < len(text):
        yield text[start:]


def timed(text: str) -> str:
    """Text with every UTC time in it shown in each reader's own time zone.

    A card once said "Created at: 2026-11-30T02:08+00:00" beside an expiry Slack showed in the
    reader's zone: two renderings of time on one card, one of them a machine's.
    """
    return "".join(when(part) if isinstance(part, datetime) else part for part in stamps(text))


def esc_data(text: str) -> str:
    """Data made inert (``esc``), with its UTC times as Slack date tokens."""
    return timed(esc(text))


def mention(slack_user: str) -> str:
    return f"<@{slack_user}>"
