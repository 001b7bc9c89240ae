"""Describes a card once, surface-neutral, from a proposal or a stored card; never renders one.

A ``CardSpec`` holds the words and values a card shows and the actions a person may still take.
Our own words are cut to the limits every surface can carry; a value a tool will be sent never
is (the engine refuses a card too long to show whole, ``tools.cards.visible``). Every character that
does not show is marked in it (``⟦U+200B⟧``), once, here, so every surface and copy marks the
same ones. Renderers (Block Kit, Adaptive Cards) turn it into a payload; they add markup and
escaping, never words or values of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final, Literal

from bot.cards import wording
from bot.placement import editable_of
from tools import CardRecord, CardStatus, Proposal, hides, marked

__all__ = [
    "LIMITS",
    "CardAction",
    "CardSpec",
    "Decided",
    "Limits",
    "Line",
    "Verb",
    "Verdict",
    "clip",
    "decided",
    "of_proposal",
    "of_record",
    "pending",
    "role_phrase",
    "visibly",
]

# The verbs a press decides through the engine with the card's token; Edit opens a form instead.
Verdict = Literal["approve", "reject", "withdraw"]
# What a person can do to a card, one button each.
Verb = Literal[Verdict, "edit"]


@dataclass(frozen=True, slots=True)
class Limits:
    """How much of each of our own words a card carries, on every surface.

    A detail is never cut: Approve sends it whole, so a card cut one (a memo at 500 characters,
    details past the 25th) sent what nobody saw. The engine bounds details instead, refusing a
    card that could not show them whole (``tools.cards.visible``). A text cut here is cut everywhere,
    so two surfaces never show two different cards.
    """

    summary: int = 1000
    warning: int = 1000
    outcome: int = 1000
    name: int = 120


LIMITS: Final = Limits()


def clip(text: str, limit: int) -> str:
    """Cuts text to ``limit`` characters, marking the cut, so a long value cannot break a payload."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class CardAction:
    """A button a person may still press: what it does, its label, and the signed card it carries."""

    verb: Verb
    label: str
    token: str


@dataclass(frozen=True, slots=True)
class Decided:
    """Who decided a card and when (``by`` is a display name).

    ``in_outcome``: the outcome line already says who decided, so it is shown instead of a
    separate "Approved by …" line (a card says each thing once).
    """

    verb: str
    by: str
    at: datetime | None
    in_outcome: bool = False


@dataclass(frozen=True, slots=True)
class Line:
    """One write of a card holding several: its sentence, its warning, and what became of it."""

    card_id: str
    summary: str
    warning: str | None
    status: str
    result: str | None
    # What its write will be sent that its sentence does not say (a note, a reason, an MCP
    # tool's arguments): one Approve for several writes sent a note nobody had seen.
    details: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class CardSpec:
    """Everything a card shows, in plain text; ``actions`` is empty once nothing can be pressed.

    ``waiting_for`` names the people a pending card waits for (its heading says so): the
    person who asked, or every approver the merchant's policy routed it to. ``progress`` is
    the approvals line of a card needing two ("Approved by Arjun Mehta, 1 of 2; …").
    ``actions``: Approve and Reject for those it is issued to, Withdraw for its asker (the
    engine refuses anyone else who presses one).

    A card of several writes (``bot.cards.several``) also has ``lines``, one per write, the
    ``intro`` above them, the Approve dialog's words (``confirm``) and the reason it was
    rejected; its ``summary``, ``details`` and ``warning`` are what a list of cards shows.
    """

    card_id: str
    status: str
    title: str
    summary: str
    details: tuple[tuple[str, str], ...]
    warning: str | None
    issued_to: str | None
    expires_at: datetime | None
    notification: str
    decided: Decided | None = None
    note: str | None = None
    outcome: tuple[str, str] | None = None
    actions: tuple[CardAction, ...] = ()
    waiting_for: tuple[str, ...] = ()
    progress: str | None = None
    lines: tuple[Line, ...] = ()
    intro: str | None = None
    confirm: tuple[str, str] | None = None
    reason: str | None = None
    # Approvals a pending card still needs, this press's included: with 2 left, a press
    # records 1 of 2 and nothing runs yet, so its confirm dialog must not say it runs.
    approvals_left: int = 1
    # It holds characters that do not show, marked (``visibly``): the card says so in a line.
    marked: bool = False
    # Who will see a reason given to Reject, wherever the card was asked (``Card.spec``).
    reason_hint: str = wording.REASON_HINT

    @property
    def token(self) -> str:
        """The signed card the buttons carry, or "" when there are none."""
        return self.actions[0].token if self.actions else ""

    @property
    def is_pending(self) -> bool:
        return self.status == CardStatus.PENDING


def visibly(spec: CardSpec) -> CardSpec:
    """``spec`` with every character that does not show marked, in every text it shows.

    A value keeps its line breaks and tabs (a memo of three lines reads as three lines); a
    name, a heading or a label is one line, so one there is marked too.
    """
    names = (
        spec.title,
        spec.summary,
        spec.progress,
        spec.issued_to,
        spec.intro,
        spec.notification,
        *spec.waiting_for,
        *(label for label, _ in spec.details),
        spec.decided.by if spec.decided is not None else None,
        spec.outcome[0] if spec.outcome else None,
        *(line.summary for line in spec.lines),
        *(label for line in spec.lines for label, _ in line.details),
    )
    values = (
        spec.warning,
        spec.note,
        spec.reason,
        spec.outcome[1] if spec.outcome else None,
        *(value for _, value in spec.details),
        *(text for line in spec.lines for text in (line.warning, line.result)),
        *(value for line in spec.lines for _, value in line.details),
    )
    if not (spec.marked or hides(names) or hides(values, lines=True)):
        return spec
    return replace(
        spec,
        title=marked(spec.title),
        summary=marked(spec.summary),
        details=tuple((marked(label), marked(value, lines=True)) for label, value in spec.details),
        warning=_value(spec.warning),
        issued_to=marked(spec.issued_to) if spec.issued_to else None,
        notification=marked(spec.notification),
        decided=replace(spec.decided, by=marked(spec.decided.by)) if spec.decided else None,
        note=_value(spec.note),
        outcome=(marked(spec.outcome[0]), marked(spec.outcome[1], lines=True))
        if spec.outcome
        else None,
        waiting_for=tuple(marked(name) for name in spec.waiting_for),
        progress=marked(spec.progress) if spec.progress else None,
        lines=tuple(_marked_line(line) for line in spec.lines),
        intro=marked(spec.intro) if spec.intro else None,
        reason=_value(spec.reason),
        confirm=(marked(spec.confirm[0]), marked(spec.confirm[1])) if spec.confirm else None,
        marked=True,
    )


def _value(text: str | None) -> str | None:
    return marked(text, lines=True) if text else text


def _marked_line(line: Line) -> Line:
    return replace(
        line,
        summary=marked(line.summary),
        warning=_value(line.warning),
        result=_value(line.result),
        details=tuple((marked(label), marked(value, lines=True)) for label, value in line.details),
    )


def shown_details(record: CardRecord) -> tuple[tuple[str, str], ...]:
    """A stored card's details, and which outside agent asked for it when one did."""
    agent = wording.outside_agent(record.agent)
    return (*record.details, (wording.ASKED_BY_AGENT, agent)) if agent else record.details


def pending(
    *,
    card_id: str,
    summary: str,
    details: tuple[tuple[str, str], ...],
    warning: str | None,
    expires_at: datetime | None,
    token: str = "",
    issued_to: str | None = None,
    waiting_for: tuple[str, ...] | None = None,
    role: str | None = None,
    routed: bool = False,
    progress: str | None = None,
    all_of: bool = False,
    editable: bool = False,
    approvals_left: int = 1,
) -> CardSpec:
    """A card waiting for a decision; with a token it carries Approve, Reject and Withdraw,
    and Edit when its tool lets a person change some of its values (``editable``).

    ``waiting_for`` defaults to the person it was issued to.
    """
    if waiting_for is None:
        waiting_for = (issued_to,) if issued_to else ()
    waiting = tuple(clip(name, LIMITS.name) for name in waiting_for if name)
    edit = (CardAction("edit", wording.EDIT, token),) if editable else ()
    actions = (
        (
            CardAction("approve", wording.APPROVE, token),
            *edit,
            CardAction("reject", wording.REJECT, token),
            CardAction("withdraw", wording.WITHDRAW, token),
        )
        if token
        else ()
    )
    made = CardSpec(
        card_id=card_id,
        status=str(CardStatus.PENDING),
        title=wording.pending_title(waiting, role=role, routed=routed, all_of=all_of),
        summary=clip(summary, LIMITS.summary),
        details=details,
        warning=clip(warning, LIMITS.warning) if warning else None,
        issued_to=clip(issued_to, LIMITS.name) if issued_to else None,
        expires_at=expires_at,
        notification=wording.card_text(summary, wording.who(waiting) or "You"),
        actions=actions,
        waiting_for=waiting,
        progress=progress,
        approvals_left=approvals_left,
    )
    return visibly(made)


def of_proposal(proposal: Proposal, *, issued_to: str | None = None, agent: str = "") -> CardSpec:
    """A fresh card, straight from the registry's proposal (it carries the signed token);
    ``agent`` is the one that asked for it (its line is added when it is an outside agent)."""
    routing = proposal.routing
    waiting = tuple(i.name for i in routing.issued_to) if routing and routing.issued_to else None
    outside = wording.outside_agent(agent)
    details = tuple((d.label, d.value) for d in proposal.details)
    return pending(
        card_id=proposal.card_id,
        summary=proposal.summary,
        details=(*details, (wording.ASKED_BY_AGENT, outside)) if outside else details,
        warning=proposal.warning,
        expires_at=proposal.expires_at,
        token=proposal.card,
        issued_to=issued_to,
        waiting_for=waiting,
        role=routing.role if routing else None,
        routed=bool(routing and routing.routed),
        progress=wording.progress((), routing.approvals, routing.role) if routing else None,
        all_of=bool(routing and 1 < routing.approvals >= len(routing.issued_to)),
        editable=bool(proposal.editable),
        approvals_left=routing.approvals if routing else 1,
    )


def of_record(
    record: CardRecord,
    *,
    token: str = "",
    issued_to: str | None = None,
    now: datetime | None = None,
    editable: bool | None = None,
) -> CardSpec:
    """A stored card as it stands: pending (with buttons when given the token) or decided.

    With ``now``, a pending card past its time shows as expired; nothing is stored by showing it.
    ``editable``: its tool lets a person change some of its values (an Edit button); by
    default, what its copies were posted with (``bot.placement.editable_of``).
    """
    if editable is None:
        editable = bool(editable_of(record))
    if record.status is CardStatus.PENDING and not (now and record.expires_at <= now):
        waiting = tuple(i.name for i in record.waiting_for) if record.issued_to else None
        return pending(
            card_id=record.card_id,
            summary=record.summary,
            details=shown_details(record),
            warning=record.warning,
            expires_at=record.expires_at,
            token=token,
            issued_to=issued_to,
            waiting_for=waiting,
            role=role_phrase(record),
            routed=record.routed,
            progress=wording.progress(
                tuple(a.name for a in record.approvals), record.approvals_needed, record.needed_role
            ),
            all_of=_all_of(record),
            editable=editable,
            approvals_left=approvals_left(record),
        )
    status = str(CardStatus.EXPIRED if record.status is CardStatus.PENDING else record.status)
    return decided(record, status=status, issued_to=issued_to)


def role_phrase(record: CardRecord) -> str | None:
    """The role a waiting card names: "manager", or "manager or the owner" once escalated."""
    role = record.needed_role
    if role and record.escalated_at is not None and role != "owner":
        return f"{role} or the owner"
    return role


def approvals_left(record: CardRecord) -> int:
    """Approvals a waiting card still needs: 2 on a two-approver card nobody approved yet."""
    return max(1, record.approvals_needed - len(record.approvals))


def _all_of(record: CardRecord) -> bool:
    """Whether every person still named must approve (as many approvals left as people)."""
    left = record.approvals_needed - len(record.approvals)
    return left > 1 and left >= len(record.waiting_for)


def decided(
    record: CardRecord, *, status: str | None = None, issued_to: str | None = None
) -> CardSpec:
    """A decided card: what it was, who decided and when, the outcome; no actions.

    A card that did not run shows its before → after values as what stays ("40 (52 was
    proposed)") and says nothing was changed, and how things stand.
    """
    status = status or str(record.status)
    by = clip(record.decided_by_name or "", LIMITS.name)
    found = wording.outcome(status, record.outcome, record.reason)
    if found and found[0] == "Reason" and any(label == "Reason" for label, _ in record.details):
        # A rejected stock card read "Reason: delivery arrived" and then "Reason: over
        # budget": the second is why it was not approved, and says so.
        found = (wording.REJECTED_BECAUSE, found[1])
    changed = status not in _UNCHANGED
    details = wording.decided_details(status, shown_details(record))
    if not changed:
        details = tuple((k, wording.proposed(v)) for k, v in details)
    made = CardSpec(
        card_id=record.card_id,
        status=status,
        title=wording.TITLES.get(status, status),
        summary=clip(record.summary, LIMITS.summary),
        details=details,
        warning=clip(record.warning, LIMITS.warning) if record.warning else None,
        issued_to=clip(issued_to, LIMITS.name) if issued_to else None,
        expires_at=record.expires_at,
        notification=wording.decided_text(status, record.summary, record.decided_by_name or ""),
        decided=None
        if status in ("expired", "superseded")
        else Decided(
            wording.decided_verb(status),
            by,
            record.decided_at,
            in_outcome=status == "done" and wording.names_decider(record.outcome, by),
        ),
        note=_note(status, record.standing),
        outcome=(found[0], clip(found[1], LIMITS.outcome)) if found else None,
    )
    return visibly(made)


# Statuses of a card whose write never ran: nothing it showed as "before → after" happened.
_NOT_RUN = frozenset({"rejected", "expired", "withdrawn", "superseded"})
# ... and of one whose write ran but changed nothing: a failed card's re-check refused it,
# an interrupted one's transaction never committed. A failed card showed "52 → 12" beside
# "so nothing was changed", an interrupted one "closed → open". Outcome unknown keeps its
# arrows: that write may have happened.
_UNCHANGED = _NOT_RUN | {"failed", "interrupted"}


def _note(status: str, standing: str | None) -> str | None:
    if status == "expired":
        return wording.expired_note(standing)
    if status in _NOT_RUN:
        return wording.unchanged(standing)
    return None
