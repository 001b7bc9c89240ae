"""Words for the offline model: help, and replies built from tool results; never calls a tool.

Replies are plain text for a phone: a short first line, then a few bullets. Values are shown as
the tools gave them (money is already formatted in the merchant's currency), so the reply can
never disagree with the card.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.agent import answers
from bot.agent.values import MAX_ROWS, fitting, label, scalar
from tools import NOT_DONE_NOTE

__all__ = [
    "HELP",
    "MAX_ROWS",
    "NEEDS",
    "NOT_UNDERSTOOD",
    "NOT_YOURS",
    "NO_BEST_SELLERS",
    "NO_CANCEL",
    "PROPOSED",
    "ROUTED",
    "TWO_NEEDED",
    "WITHDRAW",
    "arguments_unreadable",
    "list_tools",
    "phrase_failure",
    "phrase_missing_tool",
    "phrase_proposals",
    "phrase_result",
    "proposal_row",
]

PHRASINGS = (
    "pending requests",
    "requests at <branch>",
    "show request <number>",
    "approve request <number>",
    "reject request <number> because <reason>",
    "approve requests 1, 2 and 3 (one card for all of them)",
    "reject requests 4 and 6 because <reason>",
    "branches",
    "close branch <name> / reopen branch <name>",
    "orders (or orders today, orders at <branch>)",
    "show order <number>",
    "refund order <number> [amount]",
    "stock at <branch>",
    "set price of <sku> to <amount>",
    "sales this week (or today, this month)",
    "my cards / what is waiting for me",
    "tools (every tool I have here, your own MCP servers' too)",
    "use <tool> with name=value … (any of them, e.g. use ledger__list_suppliers)",
)

HELP = (
    "I can look things up for you and prepare changes for approval. Try:\n"
    + "\n".join(f"• {p}" for p in PHRASINGS)
    + "\nChanges are never made until you press Approve on the card I post."
)

# The reply to a proposal: one short line, then the card. The card itself says what will
# change (its bold summary, every detail, the warning, the expiry in each reader's own time
# zone). Repeating them here once made a 9–11 line message that pushed the card and its
# Approve button below a phone's first screen; even the summary alone cost three lines there.
PROPOSED = "Not done yet: it is waiting for your approval on the card below."

# The asker's card went to others (their role cannot approve it), or needs a second person.
ROUTED = (
    "Not done yet: your role cannot approve this, so the card below went to {who}; "
    "they were told privately."
)
# The asker's role would do, but the merchant's policy has someone else approve it: they
# raised the request themselves (or, under "never", asked for the card themselves).
NOT_YOURS = (
    "Not done yet: your merchant has someone else approve what you raised or asked for "
    "yourself, so the card below went to {who}; they were told privately."
)
NEEDS = "It needs {n} approvals from different people."
TWO_NEEDED = (
    "Not done yet: this needs two approvals from different people ({who}); see the card below."
)

# A card is withdrawn by a press, like every decision about a card: the model can no more end
# one than approve one.
WITHDRAW = (
    'To withdraw a card you asked for, press Withdraw on it (say "my cards" to see them). '
    "Only you can; nothing changes until somebody approves."
)

# The answer to a message no phrasing matches: short, and pointing at the full list.
NOT_UNDERSTOOD = (
    "I didn't catch that. I can show requests, orders, branches, stock and sales, and prepare "
    'approvals, refunds and price changes for you to approve. Say "help" for examples.'
)

# No tool knows which items sell (an order records its total, not its items), and none
# cancels an order: say so, and offer the nearest thing that can be done.
NO_BEST_SELLERS = (
    "I can't tell which items sell best: an order here records its total, not the items in "
    'it. I can show which branch sold the most ("sales this week") or the stock at a branch '
    '("stock at Koramangala").'
)
NO_CANCEL = (
    'I can\'t cancel orders; I can refund order {id} ("refund order {id}", or "refund order '
    '{id} 250" for part of it), on a card you or a manager then approve.'
)

# The fields a one-line summary of a row shows first, in this order, when a row has them.
_FIRST = (
    "name",
    "branch",
    "sku",
    "product",
    "kind",
    "customer",
    "city",
    "amount",
    "total",
    "price",
    "quantity",
    "orders",
    "net",
    "status",
    "requested_by",
    "created_at",
)
# How a bare number reads in a one-line summary.
_UNITS = {"quantity": "{} in stock", "orders": "{} orders", "net": "net {}"}
_ONE = {"orders": "1 order"}


def arguments_unreadable(why: str) -> str:
    return (
        f"I couldn't read those arguments: {why}. Write them as name=value, with quotes around "
        "a value that has spaces: use ledger__record_payment with supplier_id=SUP-001 "
        'amount=7800.50 reference="INV 9"'
    )


def list_tools(names: list[str]) -> str:
    """The tools this person's merchant has, its own servers' ones by server."""
    own = sorted(name for name in names if "__" in name)
    reference = sorted(name for name in names if "__" not in name)
    lines = [f"I have {len(names)} tools here."]
    if own:
        lines.append("From your own systems (MCP):")
        lines.extend(f"• {name}" for name in own)
    lines.append("Built in: " + ", ".join(reference))
    lines.append('Call any of them with "use <tool> with name=value …".')
    return "\n".join(lines)


def phrase_failure(message: str) -> str:
    return f"I couldn't do that. {message.strip()}"


def phrase_missing_tool(tool: str) -> str:
    return f"I can't do that here: {tool.replace('_', ' ')} is not available to me."


def phrase_result(tool: str, content: Any) -> str:
    """One tool's successful result, in a few short lines."""
    if not isinstance(content, Mapping):
        return str(content)
    rows = [row for row in content.get("rows", []) if isinstance(row, Mapping)]
    if content.get("note") == NOT_DONE_NOTE and rows:
        return _proposed(rows[0])
    if answers.from_source(tool):
        return answers.phrase_answer(tool, content)
    return _ours(tool, content, rows)


def _ours(tool: str, content: Mapping[str, Any], rows: list[Mapping[str, Any]]) -> str:
    """A result of one of our own tools."""
    scope = str(content.get("scope", "")).strip()
    labels = content.get("labels")
    said = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}
    if tool.startswith("get_") and len(rows) == 1:
        return _detail(rows[0], title=tool.removeprefix("get_").capitalize(), labels=said)
    if tool == "my_cards" and rows:
        return _join(scope, *(f"• {_card_line(row)}" for row in rows))
    if tool == "sales_summary" and rows:
        return _ranked(scope, rows, int(content.get("count", len(rows))))
    return _listing(scope, rows, int(content.get("count", len(rows))), labels=said)


def _ranked(scope: str, rows: list[Mapping[str, Any]], count: int) -> str:
    """Sales per branch, the branch that brought in the most first, and said first."""
    ranked = sorted(rows, key=lambda row: -int(row.get("net_minor") or 0))
    top = ranked[0]
    if int(top.get("net_minor") or 0) <= 0:
        return _listing(scope, ranked, count)
    lead = f"{top['branch']} sold the most: net {top['net']} from {_orders(top)}."
    return f"{lead}\n{_listing(scope, ranked, count)}"


def _card_line(row: Mapping[str, Any]) -> str:
    """A waiting card in words: what, who asked for it, whom it waits for, until when.

    It read "Approve request 3 — … · you · you · today at 6:15 PM": three bare values nobody
    could tell apart.
    """
    asked, waiting = str(row.get("asked_by") or "someone"), str(row.get("waiting_for") or "")
    who = "You" if asked == "you" else asked
    approvals = f" ({row['approvals']} approvals)" if row.get("approvals") else ""
    expires = _value(row.get("expires_at"))
    until = f" and expires {expires}" if expires else ""
    return (
        f"{str(row.get('summary', '')).rstrip('.')}. {who} asked for this card; it waits for "
        f"{waiting or 'nobody'}{approvals}{until}."
    )


def _orders(row: Mapping[str, Any]) -> str:
    orders = int(row.get("orders") or 0)
    return "1 order" if orders == 1 else f"{orders} orders"


def proposal_row(content: Any) -> Mapping[str, Any] | None:
    """The row of a write's result that proposed a card; None for any other result."""
    if not isinstance(content, Mapping) or content.get("note") != NOT_DONE_NOTE:
        return None
    rows = [row for row in content.get("rows", []) if isinstance(row, Mapping)]
    return rows[0] if rows else None


def phrase_proposals(rows: list[Mapping[str, Any]]) -> str:
    """The one line above a card of several writes: whom the card waits for, as its strictest
    write says (the card needs the strictest approval any of them needs).

    Ravi's batch of requests 4, 5 and 6 was told both "went to Arjun Mehta or Meera Iyer" and
    "went to Arjun Mehta and Meera Iyer… It needs 2 approvals": one card, two stories.
    """
    return _proposed(max(rows, key=lambda row: int(row.get("approvals_needed") or 1)))


def _proposed(row: Mapping[str, Any]) -> str:
    """The line above a fresh card: whom it waits for, when that is not simply the asker."""
    names = [str(name) for name in row.get("waiting_for") or ()]
    needed = int(row.get("approvals_needed") or 1)
    # "and" when every one of them must approve, as the card's heading says; else "or".
    joined = "and" if needed >= len(names) else "or"
    who = f"{', '.join(names[:-1])} {joined} {names[-1]}" if len(names) > 1 else "".join(names)
    if row.get("routed"):
        words = NOT_YOURS if row.get("not_yours_to_approve") else ROUTED
        routed = words.format(who=who or "the people who may approve it")
        return f"{routed} {NEEDS.format(n=needed)}" if needed > 1 else routed
    if needed > 1:
        return TWO_NEEDED.format(who=who)
    return PROPOSED


def _detail(row: Mapping[str, Any], *, title: str, labels: Mapping[str, str]) -> str:
    """A row in full, each field as the tool's cards label it (``Result.labels``)."""
    lines = [f"{title} {row['id']}" if "id" in row else title]
    for key, value in row.items():
        shown = labels.get(f"{key}={value}") or _value(value)
        if shown and _shown(key) and key != "id":
            lines.append(f"{labels.get(key) or label(key)}: {shown}")
    return "\n".join(lines)


def _shown(key: str) -> bool:
    """Machine copies of a value (minor units, foreign keys) only repeat what a person reads."""
    return not key.endswith(("_minor", "_id"))


def _listing(
    scope: str, rows: list[Mapping[str, Any]], count: int, *, labels: Mapping[str, str] = {}
) -> str:
    """Whole rows, as many as fit one answer, then how many were left out."""
    if not rows:
        return _join(scope, "Nothing to show.")
    bullets = fitting(scope, [f"• {_line(row, labels)}" for row in rows], most=MAX_ROWS)
    hidden = max(count, len(rows)) - len(bullets)
    if hidden > 0:
        bullets.append(f"…and {hidden} more; ask more narrowly to see them.")
    return _join(scope, *bullets)


def _line(row: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """A row on one line: its id, then the telling fields, then whatever else fits; each whole
    (a 150-character customer once pushed the total and status past a cut at 160)."""
    head = f"#{row['id']}" if "id" in row else ""
    picked = [key for key in _FIRST if key in row] or [k for k in row if k != "id" and _shown(k)]
    values = [labels.get(f"{key}={row[key]}") or _unit(key, _value(row[key])) for key in picked[:5]]
    return " · ".join(part for part in (head, *values) if part)


def _value(value: Any) -> str:
    return scalar(value, _nested)


def _nested(row: Mapping[str, Any]) -> str:
    """A row inside a row (a refund of an order) hides its machine fields like a top-level one:
    "Amount minor 175200, Approved by id 2" once leaked from "show order 12"."""
    shown = {k: _value(v) for k, v in row.items() if _shown(k) and k != "id"}
    return ", ".join(f"{label(k)} {v}" for k, v in shown.items() if v)


def _unit(key: str, shown: str) -> str:
    if shown == "1" and key in _ONE:
        return _ONE[key]
    return _UNITS[key].format(shown) if shown and key in _UNITS else shown


def _join(*parts: str) -> str:
    return "\n".join(part for part in parts if part)
