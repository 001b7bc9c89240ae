"""Reads what a soak left behind, in the database and in the fake Slack; never changes either.

Each check names the cards (or messages) that fail it:

- every card in exactly one state its audit history allows, none left mid-write;
- no write executed twice: refunds, request decisions, stock movements and price changes
  counted per card id, and "done" audit lines per card;
- no write without an "approved / executing" audit line before it;
- no card shown done whose write is missing, no write whose card does not say done;
- every decided card shown decided on every copy (no live buttons) with its audit line, and on
  every message Slack holds of it (one a killed server never recorded too);
- every press acknowledged; every mention answered once (a reply, or the words that it failed);
- no 5xx from a server;
- (the MCP phase) every card whose MCP server was killed mid-call "outcome unknown", and paid
  at most once on the ledger under its idempotency key.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from bench.soak.load import Tally
from bench.soak.slack import SoakSlack, actions_of

__all__ = ["Findings", "check"]

_EFFECTS = (
    "SELECT card_id FROM refunds",
    "SELECT card_id FROM stock_movements",
    "SELECT card_id FROM price_changes",
    "SELECT decided_card_id FROM branch_requests WHERE decided_card_id IS NOT NULL",
)
# What a card's audit trail must hold, and must not, for each state it ends in.
_EXECUTING = ("approved", "executing")
_NEEDS: dict[str, set[tuple[str, str] | str]] = {
    "done": {_EXECUTING, "done"},
    "failed": {"failed"},
    "rejected": {"rejected"},
    "interrupted": {_EXECUTING, "interrupted"},
    "outcome_unknown": {_EXECUTING, "outcome_unknown"},
}
_NEVER_RAN = frozenset({"pending", "rejected", "expired", "withdrawn", "superseded"})
_DECIDED = frozenset({"done", "failed", "rejected", "interrupted", "outcome_unknown"})
_STATES = _NEVER_RAN | _DECIDED


@dataclass
class Findings:
    """What the checks found, each a list of the cards or messages concerned."""

    cards: int = 0
    states: Counter[str] = field(default_factory=Counter)
    twice: list[str] = field(default_factory=list)
    without_audit: list[str] = field(default_factory=list)
    bad_state: list[str] = field(default_factory=list)
    shown_wrong: list[str] = field(default_factory=list)
    live_buttons: list[str] = field(default_factory=list)
    no_audit_line: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    answered_twice: list[str] = field(default_factory=list)
    # The MCP phase: cards whose server died mid-call that do not say "outcome unknown".
    mcp_known: list[str] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)

    def states_of(self, cards: list[str]) -> list[str]:
        """The states these cards ended in."""
        return [self.status.get(cid, "missing") for cid in cards]


async def check(
    dsn: str, slack: SoakSlack, tally: Tally, *, ledger: tuple[Path, list[str]] | None = None
) -> Findings:
    """Every check, on what the soak left; ``ledger``: the MCP phase's ledger file and the
    cards whose payment it was sent."""
    found = Findings()
    conn = await asyncpg.connect(dsn)
    try:
        cards = await conn.fetch(
            "SELECT id, status, batch_id, surface, shown_at, showing_by FROM proposals"
        )
        batches = {
            r["id"]: r["surface"] for r in await conn.fetch("SELECT id, surface FROM batches")
        }
        effects: Counter[str] = Counter()
        for query in _EFFECTS:
            effects.update(str(r[0]) for r in await conn.fetch(query))
        trail: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for r in await conn.fetch(
            "SELECT card_id, outcome, detail FROM audit_log WHERE card_id IS NOT NULL ORDER BY id"
        ):
            trail[r["card_id"]].append((r["outcome"], r["detail"]))
    finally:
        await conn.close()
    found.cards = len(cards)
    found.status = {c["id"]: c["status"] for c in cards}
    pending_batches = {c["batch_id"] for c in cards if c["batch_id"] and c["status"] == "pending"}
    for card in cards:
        cid, status = card["id"], card["status"]
        found.states[status] += 1
        _writes(found, cid, status, effects[cid], trail[cid])
        _state(found, cid, status, trail[cid])
        if status == "pending" or card["batch_id"] in pending_batches:
            continue
        services = batches.get(card["batch_id"]) if card["batch_id"] else card["surface"]
        shown = f"batch {card['batch_id']}, " if card["batch_id"] else ""
        shown += f"shown {card['shown_at']:%H:%M:%S}" if card["shown_at"] else "never shown"
        _shown(found, slack, f"{cid} ({shown})", status, _json(services))
        _unrecorded(found, slack, f"{cid} ({shown})", card["batch_id"] or cid, _json(services))
    _messages(found, slack, tally)
    if ledger is not None:
        _ledger(found, found.status, *ledger)
    return found


def _ledger(found: Findings, status: dict[str, str], db: Path, sent: list[str]) -> None:
    """Each card the ledger died under says "outcome unknown", and paid at most once."""
    with sqlite3.connect(db) as conn:
        paid = Counter(
            str(key)
            for (key,) in conn.execute(
                "SELECT idempotency_key FROM payments WHERE idempotency_key IS NOT NULL"
            )
        )
        # The key is the card's id, unique in the ledger; a payment sent again under another
        # key would show as one reference paid twice.
        twice = conn.execute(
            "SELECT reference, COUNT(*) FROM payments GROUP BY reference HAVING COUNT(*) > 1"
        ).fetchall()
    found.twice.extend(f"ledger reference {ref}: {n} payments" for ref, n in twice)
    for cid in sent:
        if status.get(cid) != "outcome_unknown":
            found.mcp_known.append(f"{cid}: {status.get(cid)}, its server killed mid-call")
        if paid[cid] > 1:
            found.twice.append(f"{cid}: {paid[cid]} ledger payments under its key")


def _writes(
    found: Findings, cid: str, status: str, made: int, trail: list[tuple[str, str]]
) -> None:
    done = sum(1 for outcome, _ in trail if outcome == "done")
    if made > 1 or done > 1:
        found.twice.append(f"{cid}: {made} writes, {done} done lines")
    if made and _EXECUTING not in trail[: _index(trail, "done")]:
        found.without_audit.append(f"{cid}: a write and no approved/executing line before it")
    if status == "done" and not made:
        found.shown_wrong.append(f"{cid}: done, and no write")
    if made and status != "done":
        found.shown_wrong.append(f"{cid}: a write, and the card says {status}")


def _index(trail: list[tuple[str, str]], outcome: str) -> int:
    return next((i for i, (o, _) in enumerate(trail) if o == outcome), len(trail))


def _state(found: Findings, cid: str, status: str, trail: list[tuple[str, str]]) -> None:
    outcomes = {o for o, _ in trail}
    lines = set(trail) | outcomes
    needs = _NEEDS.get(status, set())
    if status not in _STATES:
        found.bad_state.append(f"{cid}: {status}")
    elif not needs <= lines:
        found.bad_state.append(f"{cid}: {status} without {sorted(map(str, needs - lines))}")
    elif status in _NEVER_RAN and (_EXECUTING in trail or "done" in outcomes):
        found.bad_state.append(f"{cid}: {status}, yet its trail says it ran")


def _json(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        loaded: dict[str, Any] = json.loads(value)
        return loaded
    return dict(value or {})


def _shown(
    found: Findings, slack: SoakSlack, cid: str, status: str, services: dict[str, Any]
) -> None:
    copies = services.get("copies") if "copies" in services else [services]
    for copy in copies or []:
        if copy.get("platform", "slack") != "slack" or not copy.get("ts"):
            continue
        try:
            message = slack.indexed.message(copy["channel"], copy["ts"])
        except StopIteration:
            found.live_buttons.append(f"{cid}: a copy Slack never had ({copy['channel']})")
            continue
        if actions_of(message):
            found.live_buttons.append(f"{cid} ({status}): live buttons in {copy['channel']}")
    first = (copies or [{}])[0]
    if status in _DECIDED and first.get("ts"):
        thread = slack.indexed.thread(first["channel"], first.get("thread_ts") or first["ts"])
        if not any(m.reply_broadcast for m in thread):
            found.no_audit_line.append(f"{cid} ({status}): no audit line in its thread")


def _unrecorded(
    found: Findings, slack: SoakSlack, cid: str, shown_as: str, services: dict[str, Any]
) -> None:
    """A message of a decided card that no copy names still shows live buttons: posted by a
    server killed before it recorded where, it was invisible to the copies' check."""
    copies = services.get("copies") if "copies" in services else [services]
    known = {(c.get("channel"), c.get("ts")) for c in copies or []}
    for message in slack.indexed.by_card.get(shown_as, []):
        if (message.channel, message.ts) not in known and actions_of(message):
            found.live_buttons.append(f"{cid}: live buttons on a message no copy names")


def _messages(found: Findings, slack: SoakSlack, tally: Tally) -> None:
    # A reply is what the bot said in the thread that is not a card: its answers are drawn in
    # blocks too (rich text), so "no blocks" counted every answered mention as lost.
    cards = {id(m) for shown in slack.indexed.by_card.values() for m in shown}
    for said in tally.mentions:
        thread = slack.indexed.thread(said.channel, said.ts)
        replies = [
            m for m in thread if id(m) not in cards and not m.ephemeral_to and not m.reply_broadcast
        ]
        if not replies and not any(id(m) in cards for m in thread):
            # A card alone answers it: a turn killed before its words had its card posted by
            # whoever finished it (the words went with the process; the card says what it is).
            found.lost.append(f"{said.text!r} from {said.user} ({said.ts})")
        elif len(replies) > 1:
            said_back = " | ".join(m.text[:60] for m in replies)
            found.answered_twice.append(f"{said.text!r} ({said.ts}): {said_back}")
