"""Re-reads, at execution, every fact a card showed and refuses a write whose facts moved; never writes.

The seed's rule is that the card shows what was resolved and execution re-validates it. The
signed digest proves the arguments are the ones shown; it says nothing of the live data the
card described around them. A request shown at ₹7,800.00 and raised to ₹50,00,000 by another
system before the press was once approved at the new amount, by one approver, because the
execute half re-checked only that the request was still pending: the person agreed to one thing
and another ran, and the two-approver decision had been made on the old amount.

So every write is resolved again, by its own ``propose`` and with the sealed arguments, and
what it would show now is compared with what the card showed: its sentence and every detail,
label by label. A native write is resolved inside the transaction that will run it; a write to
another system (an MCP server's) asks that server for its preview once, just before the call,
with no transaction open (``tools.approving.sending``). When one differs nothing runs and the
person reads what changed. Asking again draws a new card, routed afresh from the new facts.

Warnings are not compared: they are advice for whoever reads the card (they can depend on who
is looking), and the facts they warn of are themselves details or re-checks of the write.
"""

from __future__ import annotations

from pydantic import BaseModel

from tools.cards.record import CardRecord
from tools.errors import ChangedSinceShownError
from tools.tool import Proposal, Tool, ToolContext

__all__ = ["ensure_as_shown"]

_ARROW = " → "


async def ensure_as_shown(tool: Tool, ctx: ToolContext, clean: BaseModel, card: CardRecord) -> None:
    """Raises ``ChangedSinceShownError`` unless ``tool`` would draw ``card`` as it was drawn.

    ``ctx`` is the execution's own (``ctx.executing``): for a native write the re-read happens
    under the row locks the write then takes, and whatever ``propose`` refuses now (a request
    decided meanwhile) is refused as it would be at proposal.
    """
    assert tool.propose is not None
    assert ctx.executing
    fresh = await tool.propose(ctx, clean)
    changed = _changed(card, fresh)
    if changed is not None:
        raise ChangedSinceShownError(changed)


def _changed(card: CardRecord, fresh: Proposal) -> str | None:
    """What reads otherwise now, in the words of the card; None when it reads the same."""
    now = {detail.label: detail.value for detail in fresh.details}
    subject = f"{fresh.subject}'s" if fresh.subject else "The card's"
    for label, shown in card.details:
        current = now.get(label)
        if current is None:
            return f"This card showed {label.lower()} {shown}, which no longer applies"
        if current != shown:
            was, is_ = _facts(shown, current)
            return f"{subject} {label.lower()} is now {is_}, not the {was} on this card"
    shown_labels = {label for label, _ in card.details}
    for label, current in now.items():
        if label not in shown_labels:
            return f"This card would now also show {label.lower()} {current}"
    if fresh.summary != card.summary:
        return (
            f"This card now reads “{fresh.summary.rstrip('.')}”, not “{card.summary.rstrip('.')}”"
        )
    return None


def _facts(shown: str, current: str) -> tuple[str, str]:
    """The parts that differ: of "52 → 40" and "50 → 38" the befores, the live facts."""
    if _ARROW in shown and _ARROW in current:
        was, is_ = shown.split(_ARROW, 1)[0], current.split(_ARROW, 1)[0]
        if was != is_:
            return was, is_
    return shown, current
