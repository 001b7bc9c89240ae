"""The error tree: every refusal the engine and the tools can give, each a sentence a person reads.

Nothing here is raised for a bug; these are the answers the product gives when a call, a card or
the merchant's data says no. ``str(error)`` is written for the person in the chat: what happened,
with the ids and names involved, and what to do next.

    CountersignError
    ├── CallError                    the tool call itself cannot go ahead
    │   ├── UnknownToolError         no tool of that name
    │   ├── NotAllowedError          the agent's allow-list does not include the tool
    │   ├── RoleRequiredError        the caller's role is below what the tool (or card) needs
    │   ├── InvalidArgumentsError    the arguments do not fit the tool's schema
    │   ├── TooLongToShowError       the arguments cannot all be shown whole on a card
    │   └── NeedsApprovalError       a write tool's plain handler was called
    ├── CardError                    an approval or rejection is refused
    │   ├── InvalidCardError         tampered, truncated, foreign-signed or garbage token
    │   ├── CardExpiredError         the card outlived its time to live
    │   ├── NotYourCardError         pressed by someone the card is not issued to
    │   ├── NotTheAskerError         withdrawn by someone other than its asker
    │   ├── AlreadyApprovedError     the same person approving a two-approver card again
    │   ├── CardBusyError            approvals kept landing while this one was counted
    │   ├── CardLiveError            the identical write already waits on a live card
    │   │   └── CardHeldError        another write waits on a card the asker may not end
    │   ├── NotAWriteError           the card names a tool that does not change anything
    │   ├── CardMismatchError        the stored arguments no longer match the signed digest
    │   └── CardDecidedError         somebody already decided (or replaced) this card
    └── DomainError                  the merchant's data says no
        ├── NotFoundError            no such branch, request, order, product...
        ├── AmbiguousError           a name matched more than one thing
        └── ConflictError            the state does not allow it (any more)
            └── ChangedSinceShownError  a fact the card showed reads otherwise now
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from tools.times import time_stamp

__all__ = [
    "AlreadyApprovedError",
    "AmbiguousError",
    "CallError",
    "CardBusyError",
    "CardDecidedError",
    "CardError",
    "CardExpiredError",
    "CardHeldError",
    "CardLiveError",
    "CardMismatchError",
    "ChangedSinceShownError",
    "ConflictError",
    "CountersignError",
    "DomainError",
    "InvalidArgumentsError",
    "InvalidCardError",
    "NeedsApprovalError",
    "NotAWriteError",
    "NotAllowedError",
    "NotFoundError",
    "NotTheAskerError",
    "NotYourCardError",
    "OutcomeUnknownError",
    "RoleRequiredError",
    "TooLongToShowError",
    "UnknownToolError",
]


class CountersignError(Exception):
    """Base of every refusal; the message is for the person in the chat."""


class CallError(CountersignError):
    """The tool call cannot go ahead as asked."""


class UnknownToolError(CallError):
    def __init__(self, name: str) -> None:
        super().__init__(f"There is no tool called {name!r}.")
        self.name = name


class NotAllowedError(CallError):
    def __init__(self, agent: str, tool: str, *, title: str = "") -> None:
        super().__init__(f"{_doing(tool, title)} is not allowed for this assistant.")
        self.agent, self.tool = agent, tool


# How a role reads in a sentence: "needs a manager", "you are staff", "ask the owner".
_ROLE_WORDS = {"owner": "the owner", "manager": "a manager", "staff": "staff"}


class RoleRequiredError(CallError):
    def __init__(self, tool: str, needed: str, actual: str, *, title: str = "") -> None:
        who = _ROLE_WORDS.get(needed, f"the {needed} role")
        you = _ROLE_WORDS.get(actual, actual)
        super().__init__(f"{_doing(tool, title)} needs {who}; you are {you}. Ask {who} to do it.")
        self.tool, self.needed, self.actual = tool, needed, actual


class InvalidArgumentsError(CallError):
    """Arguments that do not fit; each problem is a sentence naming the field in plain words.

    The model reads it to fix its call, and a person may read it too, so it says "The note is
    too long: keep it within 500 characters.", never a validator's "String should have …".
    """

    def __init__(self, tool: str, problems: Sequence[str]) -> None:
        listed = " ".join(problems) or "The details of that request could not be read."
        super().__init__(listed)
        self.tool, self.problems = tool, list(problems)

    @classmethod
    def from_validation(
        cls, tool: str, errors: Sequence[Mapping[str, Any]]
    ) -> InvalidArgumentsError:
        """The error for pydantic's ``ValidationError.errors()``, each one put in plain words."""
        return cls(tool, list(dict.fromkeys(_problem(error) for error in _telling(errors))))

    @classmethod
    def bad_value(cls, tool: str, field: str, problem: str) -> InvalidArgumentsError:
        """One field's value refused for ``problem`` ("'1.234' has more than 2 decimals")."""
        return cls(tool, [f"The {field_words(field)} is not valid: {problem}."])


def field_words(field: str) -> str:
    """An argument's name as a person says it: ``request_id`` is "request number"."""
    words = field.removesuffix("_id") + " number" if field.endswith("_id") else field
    return {"sku": "SKU", "delta": "change in quantity", "days": "number of days"}.get(
        words, words.replace("_", " ")
    )


def _telling(errors: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The errors worth saying: of a field that takes a name or a number (``str | int``), the
    number's own error ("must be at most 2,147,483,647"), not that the number is no text.

    Pydantic reports one error per alternative, with the alternative in the location; said as
    they came, a branch of 10**20 read "The str is not valid: input should be a valid string.
    The constrained-int must be at most 2147483647."
    """
    by_field: dict[str, list[Mapping[str, Any]]] = {}
    for error in errors:
        loc = error.get("loc", ())
        by_field.setdefault(str(loc[0]) if loc else "", []).append(error)
    kept: list[Mapping[str, Any]] = []
    for found in by_field.values():
        own = [e for e in found if not str(e.get("type", "")).endswith("_type")]
        kept += own or found[:1]
    return kept


def _problem(error: Mapping[str, Any]) -> str:
    # Arguments are flat: the first part of the location is the field, and any later part is
    # pydantic's name for one alternative of the field's type ("str", "constrained-int").
    where = [str(part) for part in error.get("loc", ()) if not isinstance(part, int)]
    name = where[0] if where else ""
    the = f"The {field_words(name)}" if name else "The request"
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    kind = str(error.get("type", ""))
    if kind == "extra_forbidden":
        return f"There is no {name!r} setting here."
    if kind in _BOUNDS:
        return f"{the} {_BOUNDS[kind]} {_number(ctx)}."
    if kind.startswith(("int_", "float_", "decimal_")) and kind not in _SAID:
        kind = "number"
    if kind == "string_too_short" and ctx.get("min_length") != 1:
        return f"{the} is too short."
    said = _SAID.get(kind)
    if said is None:
        return f"{the} is not valid: {str(error.get('msg', 'it could not be read')).lower()}."
    return f"{the} {said.format(**ctx)}."


# What a person is told for each kind of pydantic error; ``{…}`` come from the error's ctx.
_SAID = {
    "missing": "is missing",
    "string_too_long": "is too long: keep it within {max_length} characters",
    "string_too_short": "is empty",
    "number": "must be a number",
    "literal_error": "must be {expected}",
    "enum": "must be {expected}",
    "string_pattern_mismatch": "holds characters that cannot be used (line breaks or control codes)",
    # More digits than a number may have (about 4,300): too large for any field.
    "int_parsing_size": "is too large",
}
_BOUNDS = {
    "greater_than_equal": "must be at least",
    "greater_than": "must be more than",
    "less_than_equal": "must be at most",
    "less_than": "must be less than",
}


def _number(ctx: Mapping[str, Any]) -> str:
    """A bound as a person reads it: "2,147,483,647", not "2147483647"."""
    for key in ("ge", "gt", "le", "lt"):
        if key in ctx:
            bound = ctx[key]
            return f"{bound:,}" if isinstance(bound, int | Decimal) else str(bound)
    return "the limit"


def _doing(tool: str, title: str) -> str:
    """The action as the start of a sentence: "Approving a request", else the tool's name."""
    words = title or f"Using {tool.replace('_', ' ')}"
    return words[:1].upper() + words[1:]


class TooLongToShowError(CallError):
    """A write whose card could not show all it would send: no card is made, nothing is sent.

    Approve sends everything; a card that cut a value kept Approve and sent what nobody saw.
    """

    def __init__(self, why: str) -> None:
        super().__init__(
            f"This call's arguments are too long to show in full ({why}); nothing was sent."
        )
        self.why = why


class NeedsApprovalError(CallError):
    def __init__(self, tool: str) -> None:
        super().__init__(f"{tool} changes data and needs a person's approval first.")
        self.tool = tool


class CardError(CountersignError):
    """An approval or a rejection is refused; nothing was changed."""

    def __init__(self, message: str, *, card_id: str | None = None) -> None:
        super().__init__(message)
        self.card_id = card_id


class InvalidCardError(CardError):
    def __init__(self, reason: str = "it could not be verified") -> None:
        super().__init__(
            f"This approval card is not valid ({reason}). Ask the assistant again for a new one."
        )
        self.reason = reason


class CardExpiredError(CardError):
    def __init__(self, *, card_id: str | None = None) -> None:
        super().__init__(
            "This approval card has expired, so nothing was changed. "
            "Ask the assistant again if you still want it done.",
            card_id=card_id,
        )


class NotYourCardError(CardError):
    def __init__(self, *, card_id: str | None, owner_userid: int | None = None) -> None:
        super().__init__(
            "This approval belongs to someone else; only the person it was issued to can decide it.",
            card_id=card_id,
        )
        self.owner_userid = owner_userid


class NotTheAskerError(CardError):
    def __init__(self, *, card_id: str | None) -> None:
        super().__init__(
            "Only the person who asked for this card can withdraw it. Nothing was changed.",
            card_id=card_id,
        )


class AlreadyApprovedError(CardError):
    """The same person approving a card that needs two approvers a second time."""

    def __init__(self, *, card_id: str | None) -> None:
        super().__init__(
            "You have already approved this card; it needs a second, different person. "
            "Nothing more was changed.",
            card_id=card_id,
        )


class CardBusyError(CardError):
    """Approvals kept landing on a card while this one was counted; nothing was changed."""

    def __init__(self, *, card_id: str | None) -> None:
        super().__init__(
            "Several people approved this card at the same moment; yours was not counted. "
            "Press Approve again.",
            card_id=card_id,
        )


class CardLiveError(CardError):
    """The identical write is already waiting on a live card: no second card is made."""

    def __init__(self, *, card_id: str, waiting_for: str, at: datetime, summary: str = "") -> None:
        # It said only "a card", and the asker had to guess which of their cards it was.
        what = f": {summary.rstrip('.')}" if summary else ""
        who = f", waiting for {waiting_for}" if waiting_for else ""
        super().__init__(
            f"The same change is already waiting on a card{what}{who}. No new card was made; "
            "approve or reject that one.",
            card_id=card_id,
        )
        self.waiting_for, self.at = waiting_for, at


class CardHeldError(CardLiveError):
    """A different write waits on a live card of the same target, asked by someone whose card
    the asker may not end (a staff member's ask never ends a manager's card)."""

    def __init__(
        self, *, card_id: str, asked_by: str, summary: str, waiting_for: str, at: datetime
    ) -> None:
        who = f", waiting for {waiting_for}" if waiting_for else ""
        CardError.__init__(
            self,
            f"A card {asked_by} asked for is already waiting on this ({summary.rstrip('.')}"
            f"{who}). Only {asked_by} or someone with at least their role can replace it, so "
            f"no new card was made. Ask {asked_by} to withdraw it, or wait for it to be decided.",
            card_id=card_id,
        )
        self.waiting_for, self.asked_by, self.at = waiting_for, asked_by, at


class NotAWriteError(CardError):
    def __init__(self, tool: str, *, card_id: str | None = None) -> None:
        super().__init__(
            f"{tool} does not change anything, so there is nothing to approve.", card_id=card_id
        )
        self.tool = tool


class CardMismatchError(CardError):
    def __init__(self, *, card_id: str | None = None) -> None:
        super().__init__(
            "What this card would run no longer matches what it showed, so nothing was changed. "
            "Ask the assistant again for a fresh card.",
            card_id=card_id,
        )


class CardDecidedError(CardError):
    def __init__(self, *, card_id: str, status: str, by: str | None, at: datetime | None) -> None:
        who = f" by {by}" if by else ""
        when = f" at {time_stamp(at)}" if at else ""
        super().__init__(f"This card was already {status}{who}{when}.", card_id=card_id)
        self.status, self.by, self.at = status, by, at


class DomainError(CountersignError):
    """The merchant's data does not allow what was asked."""


class NotFoundError(DomainError):
    pass


class AmbiguousError(DomainError):
    def __init__(self, message: str, candidates: Sequence[str]) -> None:
        listed = "; ".join(candidates)
        super().__init__(f"{message} Which one did you mean: {listed}?")
        self.candidates = list(candidates)


class ConflictError(DomainError):
    pass


class ChangedSinceShownError(ConflictError):
    """A fact the card showed (an amount, a price, a stock level, a name) reads otherwise now.

    Approving agreed to what the card showed; running the write on what the data says now would
    be running something nobody saw.
    """

    def __init__(self, changed: str) -> None:
        super().__init__(f"{changed}; nothing was changed. Ask again for a new card.")


class OutcomeUnknownError(DomainError):
    """An external write left and no answer came back: it may or may not have happened.

    Never "done", never "nothing was changed", and never sent again on its own: the card says
    so, and a person checks the system it went to before asking again.
    """
