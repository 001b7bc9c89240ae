"""Edits a card before approval: proposes it again with a person's changes; never performs a write.

Edit is a new proposal, not a change to the old card. The person the card is issued to changes
only what the tool declares ``editable`` (a refund's amount, a stock delta, a note); the merged
arguments go through the same ``Registry.call`` as the model's call, as the editor, so they are
re-resolved from live data and routed under the policy again. The new card replaces the old one
in the same transaction (``tools.people.routing.replace_live``, one live card per target), and the old
card says what changed: "Replaced by an edited card: ₹300.00 → ₹200.00". What runs is what the
new card shows, once, when someone it is issued to approves it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tools import schema
from tools.agent import Agent
from tools.approving.checks import issued_to, qualified, stored_card, verify
from tools.approving.trail import Trail
from tools.caller import Caller
from tools.cards.record import CardRecord, CardStatus
from tools.deps import Deps
from tools.errors import (
    ConflictError,
    CountersignError,
    InvalidArgumentsError,
    NotAllowedError,
)
from tools.tool import ProposalDetail, Tool

__all__ = ["Edit", "outcome", "prepare", "replaced_it"]

EDITED = "Replaced by an edited card"


@dataclass(frozen=True, slots=True)
class Edit:
    """An edit that passed its checks: the proposal to make again, as ``proposer``, and the
    card it is to replace."""

    proposer: Agent
    tool: str
    args: dict[str, Any]
    card: CardRecord


async def prepare(
    deps: Deps, agent: Agent, token: str, caller: Caller, changes: Mapping[str, Any]
) -> Edit:
    """Checks an edit of the card's write with ``changes``, as ``caller``; what to propose.

    The same checks as a decision first (signature, the stored card, issued to the caller, the
    caller's role now): someone who may not approve a card must not be able to rewrite it.
    ``Registry.edit`` then proposes ``Edit.args`` through ``Registry.call``, replacing the card.

    Raises:
        InvalidArgumentsError: a change names an argument that cannot be edited, does not fit
            the tool's schema, or changes nothing.
        CountersignError: any refusal of the card; nothing changes.
    """
    trail = Trail(deps, agent, caller)
    claims, tool = await verify(deps, trail, token, caller)
    try:
        record = stored_card(claims, await deps.cards.get(claims.card_id))
        trail.entry.agent = record.agent
        issued_to(record, caller)
        qualified(record, tool, caller)
        if record.status is not CardStatus.PENDING:
            raise ConflictError(_gone(record))
        merged = _merged(tool, record, changes)
        proposer = deps.proposer(record.agent, agent)
        if proposer is None:
            raise NotAllowedError(record.agent, tool.name)
    except CountersignError as refusal:
        raise await trail.refuse(refusal) from None
    return Edit(proposer, tool.name, merged, record)


def _merged(tool: Tool, record: CardRecord, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The card's sealed arguments with the changes, checked against the tool's schema."""
    locked = sorted(set(changes) - set(tool.editable))
    if locked:
        names = ", ".join(locked)
        allowed = ", ".join(tool.editable) or "nothing"
        raise InvalidArgumentsError(
            tool.name,
            [f"On this card you can change {allowed}; {names} cannot be edited."],
        )
    merged = {**record.args, **changes}
    clean = schema.validate(tool.name, tool.args, merged).model_dump(mode="json")
    before = schema.validate(tool.name, tool.args, record.args).model_dump(mode="json")
    if clean == before:
        raise InvalidArgumentsError(
            tool.name, ["The edit changes nothing on the card, so it stays as it is."]
        )
    return clean


def _gone(record: CardRecord) -> str:
    return (
        f"Card {record.card_id} is no longer waiting (it is {record.status}), so it cannot be "
        "edited. Ask again for a fresh card."
    )


def outcome(before: Sequence[tuple[str, str]], after: Sequence[ProposalDetail]) -> str:
    """What the old card says: the values the person changed, as the cards showed them.

    Lines that already read "before → after" (what the write would leave) follow from the
    changed value, so they are left out: "₹300.00 → ₹200.00", not three arrows for one edit.
    """
    new = {d.label: d.value for d in after}
    changed = [
        (label, value, new[label])
        for label, value in before
        if label in new and new[label] != value and "→" not in value
    ]
    if not changed:
        return f"{EDITED}."
    if len(changed) == 1:
        return f"{EDITED}: {changed[0][1]} → {changed[0][2]}"
    return f"{EDITED}: " + "; ".join(f"{label} {old} → {now}" for label, old, now in changed)


def replaced_it(edited: CardRecord, replaced: Sequence[CardRecord], now: datetime) -> None:
    """Refuses an edit whose card was not the one its proposal replaced.

    Without this, an edit of a card decided a moment earlier would still make a fresh card,
    and the person would be approving something nobody had asked for any more.

    Raises:
        ConflictError: the card was decided, withdrawn or ran out of time meanwhile.
    """
    if any(old.card_id == edited.card_id for old in replaced) and edited.expires_at > now:
        return
    raise ConflictError(
        f"Card {edited.card_id} was decided or ran out of time while it was being edited, so "
        "no new card was made."
    )
