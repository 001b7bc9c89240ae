"""Makes data inert in Slack's mrkdwn and shows times in each reader's zone; never words anything.

Any string that came from the merchant's data, a person or the model goes through ``esc`` before
it is placed in mrkdwn: a branch named ``<!channel>`` must ping nobody, and ``&`` must not start
an entity. ``bot.slack.texts`` words everything around it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

__all__ = ["esc", "esc_data", "mention", "timed", "when"]


# &, < and > are Slack's own escapes. mrkdwn has no escape for its styling characters, so
# they become look-alikes that Slack does not read as markup: a note typed as "*URGENT*
# ~approved~" restyled the whole card before.
_INERT = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "*": "\u2217",  # ∗ asterisk operator
        "_": "\u02cd",  # ˍ modifier letter low macron
        "~": "\u223c",  # ∼ tilde operator
        "`": "\u02cb",  # ˋ modifier letter grave accent
    }
)


def esc(text: str) -> str:
    """Makes data inert in mrkdwn: ``&``, ``<``, ``>`` escaped, styling characters defused.

    A branch named ``<!channel>`` pings nobody, ``<https://x|Approve here>`` is no link and
    ``*bold*`` is not bold. Bare URLs are kept from linking by ``verbatim`` on the block's text.
    """
    return text.translate(_INERT)


def when(at: datetime) -> str:
    """A time every reader sees in their own time zone, with a UTC fallback for old clients."""
    fallback = f"{at:%Y-%m-%d %H:%M} UTC"
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} at {{time}}|{fallback}>"


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


def _as_when(found: re.Match[str]) -> str:
    if found["iso"]:
        text = f"{found['iso']} {found['hm']}"
        at = datetime.strptime(text, "%Y-%m-%d %H:%M")
    else:
        text = f"{found['day']} {found['mon']} {found['year']} {found['hm2']}"
        at = datetime.strptime(text, "%d %b %Y %H:%M")
    return when(at.replace(tzinfo=UTC))


def timed(text: str) -> str:
    """Escaped text with every UTC time in it shown in each reader's own time zone.

    A card once said "Created at: 2026-11-30T02:08+00:00" beside an expiry Slack showed in the
    reader's zone: two renderings of time on one card, one of them a machine's.
    """
    return _STAMP.sub(_as_when, text)


def esc_data(text: str) -> str:
    """Data made inert (``esc``), with its UTC times as Slack date tokens."""
    return timed(esc(text))


def mention(slack_user: str) -> str:
    return f"<@{slack_user}>"
