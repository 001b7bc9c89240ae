"""The one protocol every surface implements for the core; never decides, runs or words anything itself.

The core (turns, presses, decisions, identity) speaks to Slack and Teams only through an
``Adapter``: an object a surface builds per request (bound to where the request came from and
who sent it) or per card copy (to show a card settled without a request). It turns the core's
plain calls into the platform's wire format. ``Words`` is the surface's module of texts, so the
core chooses *which* sentence a person reads and the surface chooses its wording and escaping.

A card is a ``bot.cards.card.Card``, of one write or several: every method that shows one takes it
whole, and the surface's one renderer draws it. Every method may be called for any copy of a
card: ``update`` and ``post_audit`` take the placement they act on, so a card with several
copies (a thread, a DM to each approver) is shown by calling them once per copy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

from bot.cards.card import Card, Fresh
from bot.placement import ListPlacement, Placement, Platform
from tools import Caller, Scope

__all__ = [
    "Adapter",
    "Form",
    "Home",
    "Listing",
    "Reach",
    "Step",
    "Steps",
    "Stream",
    "Streaming",
    "Words",
    "stream_of",
]


class Words(Protocol):
    """The sentences a surface shows for what the core decided (each surface's ``texts`` module)."""

    def not_linked(self) -> str: ...

    def not_connected(self) -> str: ...

    def model_failed(self) -> str: ...

    def database_unreachable(self) -> str: ...

    def message_database_unreachable(self) -> str: ...

    def press_failed(self) -> str: ...

    def refused(self, message: str) -> str: ...

    def not_your_card(self, owner: str | None, waiting: tuple[str, ...] = ()) -> str: ...

    def reply(self, text: str) -> str: ...

    def new_tools(self, merchant: str, source: str, tools: Mapping[str, Scope]) -> str:
        """The owner's notice that ``source`` lists ``tools`` they have not reviewed, with what
        the server marks each as (its names are the server's: shown as typed)."""
        ...


@dataclass(frozen=True, slots=True)
class Step:
    """The step a turn is on: the tool being called, and whether it is a write (a card)."""

    tool: str
    write: bool


# Told of each tool call as it starts, so a surface can say what the agent is doing. It is
# given the tool, never the model's words, and must return at once: it may not hold up a turn.
Steps = Callable[[Step], None]


class Stream(Protocol):
    """An answer shown as the model writes it: one message that grows in place.

    Only the model's words go in; a card is never streamed (it is posted whole, after the
    text), so no signed token enters one. A stream buffers as its platform needs (not every
    token is a call) and absorbs the platform's failures: a stream that failed takes no more,
    and ``close`` says how much of the answer people can see, so the core posts the rest.
    """

    async def append(self, text: str) -> None:
        """Adds ``text`` to the answer (it may wait in a buffer); never raises."""
        ...

    async def close(self) -> str:
        """Ends the stream and returns the text shown in it: everything appended, or the
        part that got through before the platform failed ("" when nothing was shown)."""
        ...

    @property
    def message(self) -> str | None:
        """The id of the message the stream grew (None when none was started)."""
        ...


@runtime_checkable
class Streaming(Protocol):
    """A surface that can stream an answer where the request came from (``stream_of``)."""

    def stream(self) -> Stream | None:
        """A new stream for this request's answer, or None where the platform cannot stream
        here (the answer is then posted whole, as one message)."""
        ...


def stream_of(adapter: Adapter) -> Stream | None:
    """The stream an adapter offers for this answer; None for a surface that does not stream.

    A separate protocol from ``Adapter``, so a surface takes up streaming by adding one method
    and every other surface keeps posting its answers whole.
    """
    return adapter.stream() if isinstance(adapter, Streaming) else None


@dataclass(frozen=True, slots=True)
class Form:
    """A form to open for the person behind the request: what it asks, about which card."""

    kind: Literal["reject"]
    card_id: str
    token: str
    summary: str
    # Who will see what is typed in it (``bot.cards.wording.reason_hint``).
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Home:
    """Where the platform itself says a user belongs: their own workspace (or tenant), the
    organisation it is part of (a Slack Enterprise Grid org), if any, and the org's other
    workspaces the user is also a member of."""

    team: str
    org: str | None = None
    teams: tuple[str, ...] = ()

    @property
    def ids(self) -> tuple[str, ...]:
        found = (self.team, self.org, *self.teams) if self.org else (self.team, *self.teams)
        return tuple(dict.fromkeys(found))


@dataclass(frozen=True, slots=True)
class Listing:
    """A person's queue as it stands: cards waiting for them, cards they asked for that wait
    on others, and the card just decided (shown first, as it now stands), at ``now``."""

    mine: tuple[Card, ...]
    asked: tuple[Card, ...]
    now: datetime
    decided: Card | None = None


class Adapter(Protocol):
    """One surface as the core uses it, bound to a request (or to a card's copy)."""

    @property
    def platform(self) -> Platform: ...

    @property
    def words(self) -> Words: ...

    async def verified_email(self, user: str) -> str | None:
        """The email the platform vouches for (verified) for this user, or None."""
        ...

    async def home_of(self, user: str) -> Home | None:
        """Where the platform says this user belongs (their own workspace, not the
        installation's), or None when it cannot say."""
        ...

    async def member_by_email(self, email: str) -> str | None:
        """The platform id of the member of this installation the platform vouches has this
        email (verified, not a bot, not deactivated), or None: how a card reaches an approver
        who never wrote to the app."""
        ...

    async def post(self, text: str) -> str | None:
        """Says ``text`` where the request came from (the thread, the chat), for everyone there;
        returns the message's id (None when the platform gave none)."""
        ...

    async def edit_answer(self, placement: Placement, text: str) -> bool:
        """Replaces the words of the answer posted above a card's copy (``placement.reply``)
        with ``text``; False when the platform refused it (logged, never raised)."""
        ...

    async def post_card(self, fresh: Fresh, *, caller: Caller, conversation: str) -> Placement:
        """Posts a fresh card (``fresh.spec()``) where the request came from and returns where
        it went."""
        ...

    async def update(self, card: Card, placement: Placement) -> Placement | bool:
        """Shows the card as it stands now, in place, for everyone who sees that copy.

        Returns the copy's new placement when its message was gone and it was posted anew
        (the core records it); else True, or False when the platform failed it in a way a
        later try may not meet (its own error, a rate limit; logged), so the core shows the
        decision again later.
        """
        ...

    async def update_list(self, where: ListPlacement, listing: Listing) -> bool:
        """Replaces a private list of a person's cards (``bot.presses.listed``) with
        ``listing``; False when the platform no longer takes its URL (logged, never raised)."""
        ...

    async def post_audit(
        self, card: Card, placement: Placement, *, audit_channel: str | None = None
    ) -> bool:
        """Posts the decision's record where that copy's channel sees it (one line for every
        write of a card of several), and in the installation's ``audit_channel`` when one is
        set; False when a post failed in a way a later try may not meet (as for ``update``)."""
        ...

    async def post_privately(self, text: str) -> None:
        """Tells only the person behind the request."""
        ...

    async def notify(self, user: str, text: str) -> bool:
        """Tells a person privately wherever they are (a DM, a 1:1 chat); ``user`` is their
        platform id. False when the platform refused it (logged, never raised)."""
        ...

    async def send_copy(self, card: Card, user: str, *, token: str, push: str) -> Placement | None:
        """Sends one person a private copy of a card, with its buttons.

        Slack: a DM from the app; Teams: a 1:1 chat with the bot. ``user`` is their platform id
        (Slack user id; Teams AAD object id) in this adapter's installation, ``push`` the
        notification text (what, and for whom). Returns the copy's placement, which the core
        records so every copy is updated when the card changes; None when it could not be
        delivered (logged; the card stays live where it was posted).
        """
        ...

    async def typing(self, *, on: bool) -> None:
        """Shows (or stops showing) that an answer is being prepared."""
        ...

    async def open_form(self, form: Form) -> None:
        """Opens a form for the person behind the request."""
        ...

    def here(self, placements: Sequence[Placement]) -> Placement | None:
        """The copy of a card the request came from (None: the card is not shown here)."""
        ...


class Reach(Protocol):
    """A mounted surface that can speak in one of its installations outside any request."""

    @property
    def platform(self) -> Platform: ...

    async def with_installation(
        self,
        installation: str,
        work: Callable[[Adapter], Awaitable[None]],
        *,
        user: str | None = None,
    ) -> bool: ...
