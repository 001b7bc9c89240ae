"""The error tree: every refusal the engine and the tools can give, each a sentence a person reads.

Nothing here is raised for a bug; these are the answers the product gives when a call, a card or
the merchant's data says no. ``str(error)`` is written for the person in the chat: what happened,
with the ids and names involved, and what to do next.

    CountersignError
    ├── CallError                    the tool call itself cannot go ahead
    │   ├── UnknownToolError         no tool of that name
    │   ├── NotAllowedError          the agent's allow-list does not include the tool
    │   ├── RoleRequiredError        the caller's role is below what the tool needs
    │   ├── InvalidArgumentsError    the arguments do not fit the tool's schema
    │   └── NeedsApprovalError       a write tool's plain handler was called
    ├── CardError                    an approval or rejection is refused
    │   ├── InvalidCardError         tampered, truncated, foreign-signed or garbage token
    │   ├── CardExpiredError         the card outlived its time to live
    │   ├── NotYourCardError         pressed by someone other than the person it was issued to
    │   ├── NotAWriteError           the card names a tool that does not change anything
    │   ├── CardMismatchError        the stored arguments no longer match the signed digest
    │   └── CardDecidedError         somebody already decided this card
    └── DomainError                  the merchant's data says no
        ├── NotFoundError            no such branch, request, order, product...
        ├── AmbiguousError           a name matched more than one thing
        └── ConflictError            the state does not allow it (any more)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

__all__ = [
    "AmbiguousError",
    "CallError",
    "CardDecidedError",
    "CardError",
    "CardExpiredError",
    "CardMismatchError",
    "ConflictError",
    "CountersignError",
    "DomainError",
    "InvalidArgumentsError",
    "InvalidCardError",
    "NeedsApprovalError",
    "NotAWriteError",
    "NotAllowedError",
    "NotFoundError",
    "NotYourCardError",
    "RoleRequiredError",
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
    def __init__(self, agent: str, tool: str) -> None:
        super().__init__(f"The {agent} agent is not allowed to use {tool}.")
        self.agent, self.tool = agent, tool


class RoleRequiredError(CallError):
    def __init__(self, tool: str, needed: str, actual: str) -> None:
        article = "an" if needed[:1] in "aeiou" else "a"
        super().__init__(
            f"{tool} needs the {needed} role; you are {actual}. Ask {article} {needed} to do this."
        )
        self.tool, self.needed, self.actual = tool, needed, actual


class InvalidArgumentsError(CallError):
    def __init__(self, tool: str, problems: Sequence[str]) -> None:
        listed = "; ".join(problems) or "they could not be read"
        super().__init__(f"The arguments for {tool} are not valid: {listed}.")
        self.tool, self.problems = tool, list(problems)


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
        who = by or "someone"
        when = f" at {at:%Y-%m-%d %H:%M} UTC" if at else ""
        super().__init__(f"This card was already {status} by {who}{when}.", card_id=card_id)
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
