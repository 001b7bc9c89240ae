"""Describes a batch card once, surface-neutral, from a stored batch; never renders one.

A batch card is one heading, one line per write (its own sentence, with ids and names, its
warning, and once decided its outcome), and one set of buttons for all of them: "Approve all
N" (with a confirm), Reject, Withdraw. Renderers (Block Kit, Adaptive Cards) add markup and
escaping, never words of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot import batchwords, wording
from bot.cardspec import LIMITS, CardAction, CardSpec, Decided, clip
from tools import CardRecord, CardStatus
from tools.batching import BatchRecord

__all__ = ["BatchLine", "BatchSpec", "as_card", "of_batch", "statuses"]

# The summary a line carries: twenty lines of this fit a Slack message and a phone screen.
_LINE = 400


@dataclass(frozen=True, slots=True)
class BatchLine:
    """One write of the batch: its sentence, its warning, and what became of it."""

    card_id: str
    summary: str
    warning: str | None
    status: str
    result: str | None


@dataclass(frozen=True, slots=True)
class BatchSpec:
    """Everything a batch card shows, in plain text; ``actions`` empty once nothing is left."""

    batch_id: str
    status: str
    title: str
    intro: str
    lines: tuple[BatchLine, ...]
    expires_at: datetime | None
    notification: str
    waiting_for: tuple[str, ...] = ()
    progress: str | None = None
    decided: Decided | None = None
    reason: str | None = None
    actions: tuple[CardAction, ...] = ()
    confirm: tuple[str, str] = ("", "")

    @property
    def token(self) -> str:
        return self.actions[0].token if self.actions else ""

    @property
    def is_pending(self) -> bool:
        return self.status == CardStatus.PENDING


def statuses(batch: BatchRecord, now: datetime | None = None) -> list[str]:
    """Each card's status as shown: a waiting card past its time reads expired."""
    return [
        str(CardStatus.EXPIRED)
        if c.status is CardStatus.PENDING and now is not None and c.expires_at <= now
        else str(c.status)
        for c in batch.items
    ]


def _line(card: CardRecord, status: str) -> BatchLine:
    return BatchLine(
        card_id=card.card_id,
        summary=clip(card.summary, _LINE),
        warning=clip(card.warning, LIMITS.warning) if card.warning else None,
        status=status,
        result=batchwords.item_result(status, card.outcome),
    )


def of_batch(batch: BatchRecord, *, token: str = "", now: datetime | None = None) -> BatchSpec:
    """The batch as it stands: waiting (with buttons when given its token) while any card
    waits, else settled with each card's outcome."""
    shown = statuses(batch, now)
    lines = tuple(_line(c, s) for c, s in zip(batch.items, shown, strict=True))
    count = len(lines)
    live = [c for c, s in zip(batch.items, shown, strict=True) if s == CardStatus.PENDING]
    if live:
        return _pending(batch, live[0], lines, token)
    decider = _decider(batch)
    return BatchSpec(
        batch_id=batch.batch_id,
        status="decided",
        title=batchwords.decided_title(shown),
        intro=batchwords.settled_intro(count),
        lines=lines,
        expires_at=batch.expires_at,
        notification=f"{batchwords.decided_title(shown)}: {count} changes in one card.",
        decided=Decided(
            wording.decided_verb(str(decider.status)),
            clip(decider.decided_by_name or "", LIMITS.name),
            decider.decided_at,
        )
        if decider is not None and decider.decided_by_name
        else None,
        reason=next((c.reason for c in batch.items if c.reason), None),
    )


def _pending(
    batch: BatchRecord, first: CardRecord, lines: tuple[BatchLine, ...], token: str
) -> BatchSpec:
    count = len(lines)
    waiting = tuple(clip(i.name, LIMITS.name) for i in first.waiting_for if i.name)
    actions = (
        (
            CardAction("approve", batchwords.approve_all(count), token),
            CardAction("reject", batchwords.REJECT_ALL, token),
            CardAction("withdraw", wording.WITHDRAW, token),
        )
        if token
        else ()
    )
    left = first.approvals_needed - len(first.approvals)
    return BatchSpec(
        batch_id=batch.batch_id,
        status=str(CardStatus.PENDING),
        title=wording.pending_title(
            waiting,
            role=_role(first),
            routed=first.routed,
            all_of=left > 1 and left >= len(waiting),
        ),
        intro=batchwords.intro(count),
        lines=lines,
        expires_at=batch.expires_at,
        notification=batchwords.card_text(count, wording.who(waiting) or "You"),
        waiting_for=waiting,
        progress=wording.progress(
            tuple(a.name for a in first.approvals), first.approvals_needed, first.needed_role
        ),
        actions=actions,
        confirm=(
            batchwords.confirm_title(count),
            batchwords.confirm_text([line.summary for line in lines if line.result is None]),
        ),
    )


def _role(card: CardRecord) -> str | None:
    """The role a waiting batch names: "manager", or "manager or the owner" once escalated."""
    role = card.needed_role
    if role and card.escalated_at is not None and role != "owner":
        return f"{role} or the owner"
    return role


def _decider(batch: BatchRecord) -> CardRecord | None:
    """The card whose decision names who decided the batch (a press decides them all)."""
    decided = [c for c in batch.items if c.decided_by_name and c.decided_at]
    return max(decided, key=lambda c: c.decided_at or batch.created_at, default=None)


def as_card(batch: BatchRecord, *, token: str = "", now: datetime | None = None) -> CardSpec:
    """The batch as one entry of a list of cards (the App Home, ``/countersign pending``):
    a card whose details are its writes, with the batch's buttons."""
    spec = of_batch(batch, token=token, now=now)
    warnings = [f"{n}. {line.warning}" for n, line in enumerate(spec.lines, 1) if line.warning]
    return CardSpec(
        card_id=batch.batch_id,
        status=spec.status if spec.is_pending else str(CardStatus.EXPIRED),
        title=spec.title,
        summary=batchwords.summary(len(spec.lines)),
        details=tuple((f"{n}.", line.summary) for n, line in enumerate(spec.lines, 1)),
        warning=clip(" ".join(warnings), LIMITS.warning) if warnings else None,
        issued_to=None,
        expires_at=spec.expires_at,
        notification=spec.notification,
        actions=spec.actions,
        waiting_for=spec.waiting_for,
        progress=spec.progress,
    )
