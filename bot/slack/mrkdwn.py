"""Keeps data from becoming Slack tokens in mrkdwn and shows the times in it as Slack's date tokens; never words anything.

Data a person may copy (ids, SKUs, paths, amounts, names, notes, arguments) is not placed in
mrkdwn at all: it goes in plain_text or rich_text, which Slack shows as typed
(``bot.slack.rich``). What mrkdwn still carries — our own words, mentions, times, and the
``text`` of a message, which is its push notification — goes through ``esc`` wherever it holds
data: a branch named ``<!channel>`` must ping nobody, and ``&`` must not start an entity.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from tools import find_times, time_stamp

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
    return time_stamp(at)


def stamps(text: str) -> Iterator[str | datetime]:
    """``text`` cut at the times in it (``tools.find_times``): the words between them, and each."""
    return find_times(text)


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
