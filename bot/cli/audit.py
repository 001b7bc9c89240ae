"""Prints the audit log as a fixed-width table, newest first; reads only, never changes a row."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.cli.failures import CliError, checked_url
from bot.cli.lookup import find_card_id, find_tenant, person_names, tenant_names
from bot.cli.session import open_database
from bot.settings import Settings
from tools import AuditLog, Feedback, FeedbackLog
from tools.db import AuditRow

__all__ = ["printable", "render_table", "show_audit", "show_feedback"]


# C0 controls, DEL, C1 controls and the bidi embeddings, overrides and isolates. A reject reason
# is typed by anyone a card reaches; printed raw, "\x1b]0;…\x07\x1b[2J" retitled and cleared
# the operator's terminal, and U+202E can make a line read backwards.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every character that could steer a terminal removed."""
    return _UNPRINTABLE.sub("", text)


@dataclass(frozen=True, slots=True)
class _Column:
    header: str
    cap: int
    cell: Callable[[AuditRow, _Names], str]
    right: bool = False


@dataclass(frozen=True, slots=True)
class _Names:
    people: dict[int, str]
    merchants: dict[int, str]


def _time(at: datetime) -> str:
    # Stored times are UTC; a naive one (SQLite without the type's help) is UTC as well.
    aware = at if at.tzinfo else at.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _name(ids: dict[int, str], key: int | None) -> str:
    if key is None:
        return "-"
    return ids.get(key, f"#{key}")


def _ms(took: float) -> str:
    return f"{took:.1f}" if took < 10 else f"{took:.0f}"


_COLUMNS = (
    _Column("TIME (UTC)", 16, lambda r, n: _time(r.at)),
    _Column("AGENT", 16, lambda r, n: r.agent),
    _Column("TOOL", 30, lambda r, n: r.tool),
    _Column("USER", 18, lambda r, n: _name(n.people, r.user_id)),
    _Column("TENANT", 16, lambda r, n: _name(n.merchants, r.tenant_id)),
    _Column("SCOPE", 5, lambda r, n: r.scope),
    _Column("OUTCOME", 15, lambda r, n: r.outcome),
    # Details are sentences; 44 characters keeps a row within a wide terminal.
    _Column("DETAIL", 44, lambda r, n: " ".join(r.detail.split())),
    _Column("ROWS", 6, lambda r, n: str(r.rows), right=True),
    _Column("MS", 7, lambda r, n: _ms(r.took_ms), right=True),
    _Column("CARD", 8, lambda r, n: (r.card_id or "")[:8]),
)


def _fit(text: str, width: int, *, right: bool) -> str:
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.rjust(width) if right else text.ljust(width)


def render_table(
    rows: Sequence[AuditRow], people: dict[int, str], merchants: dict[int, str]
) -> str:
    """The rows as a table with a header; columns as wide as their content, up to a cap each."""
    names = _Names(people, merchants)
    cells = [[printable(column.cell(row, names)) for column in _COLUMNS] for row in rows]
    widths = [
        min(column.cap, max(len(column.header), *(len(line[i]) for line in cells)))
        for i, column in enumerate(_COLUMNS)
    ]
    lines = [[column.header for column in _COLUMNS], *cells]
    return "\n".join(_line(line, widths) for line in lines)


def _line(texts: list[str], widths: list[int]) -> str:
    fitted = (
        _fit(text, width, right=column.right)
        for text, width, column in zip(texts, widths, _COLUMNS, strict=True)
    )
    return "  ".join(fitted).rstrip()


async def show_audit(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign audit``: the newest entries, for one merchant or card when asked."""
    if getattr(args, "feedback", False):
        return await show_feedback(settings, args)
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.tenant) if args.tenant else None
        card_id = await find_card_id(db, args.card) if args.card else None
        rows = await AuditLog(db).recent(
            tenantid=tenant.id if tenant else None, limit=args.limit, card_id=card_id
        )
        people = await person_names(db, (r.user_id for r in rows if r.user_id is not None))
        merchants = await tenant_names(db, (r.tenant_id for r in rows if r.tenant_id is not None))
    which = printable(
        "".join(
            (
                f" for {tenant.name}" if tenant else "",
                f" about card {card_id[:8]}" if card_id else "",
            )
        )
    )
    if not rows:
        return f"No audit entries{which} yet."
    table = render_table(rows, people, merchants)
    if len(rows) < args.limit:
        return f"{table}\n\n{_entries(len(rows))}{which}."
    return f"{table}\n\nThe newest {_entries(len(rows))}{which}; use --limit N to see more."


def _entries(count: int) -> str:
    return "1 entry" if count == 1 else f"{count} entries"


async def show_feedback(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign audit --feedback``: the newest presses on answers' thumbs, per merchant."""
    if args.card:
        raise CliError("--feedback is about answers, never cards: leave out --card.")
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.tenant) if args.tenant else None
        presses = await FeedbackLog(db).recent(
            tenantid=tenant.id if tenant else None, limit=args.limit
        )
        people = await person_names(db, (p.userid for p in presses if p.userid is not None))
        merchants = await tenant_names(db, (p.tenantid for p in presses if p.tenantid is not None))
    which = printable(f" for {tenant.name}" if tenant else "")
    if not presses:
        return f"No feedback on answers{which} yet."
    good = sum(p.good for p in presses)
    table = _feedback_table(presses, _Names(people, merchants))
    tally = f"{good} helpful, {len(presses) - good} not helpful"
    return f"{table}\n\n{tally}: the newest {_entries(len(presses))}{which}."


_FEEDBACK_HEADERS = ("TIME (UTC)", "USER", "TENANT", "RATING", "CONVERSATION", "ANSWER")


def _feedback_table(presses: Sequence[Feedback], names: _Names) -> str:
    rows = [
        [
            printable(cell)
            for cell in (
                _time(p.at),
                _name(names.people, p.userid),
                _name(names.merchants, p.tenantid),
                "helpful" if p.good else "not helpful",
                p.conversation,
                p.answer,
            )
        ]
        for p in presses
    ]
    lines = [list(_FEEDBACK_HEADERS), *rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(_FEEDBACK_HEADERS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )
