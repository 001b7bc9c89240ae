"""Where a card was posted, typed per surface, and how that is kept in the card's JSON column; never posts.

A card has one or more copies (the thread it was asked in; later, a DM to each person it is
issued to). Each copy is a ``Placement``: a frozen model discriminated by ``platform``, holding
what its surface needs to update that copy from any process. They are stored in the existing
``proposals.surface`` JSON column, so no migration is needed:

- one copy is stored flat, with exactly the keys of a card's one copy (so a row any release
  wrote loads unchanged, and a row written now reads the same to an older process);
- several copies are stored as ``{"copies": [...]}``.

Besides its copies, a card may be on private lists a person asked for (``/countersign
pending`` in Slack): a ``ListPlacement`` each, stored under ``"lists"`` beside the copies (a key
an older process ignores). A list is the person's whole queue, not this card alone, so it is
redrawn whole through the URL the platform gave for it, for as long as that URL lasts.

A stored dict that matches no surface (a platform this build does not know) yields no
placement rather than an error: such a card is simply not shown here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from tools import CardRecord, Platform

__all__ = [
    "ListPlacement",
    "Placement",
    "Platform",
    "SlackPlacement",
    "TeamsPlacement",
    "editable_of",
    "first",
    "first_copy",
    "lists_of_stored",
    "placements_of",
    "placements_of_stored",
    "same_message",
    "stored",
]


class _Copy(BaseModel):
    # Unknown keys are kept out rather than refused: a newer process may store more.
    model_config = ConfigDict(frozen=True, extra="ignore")

    # The model's conversation the card belongs to: the decision is told there.
    conversation: str | None = None
    # The signed card, kept so the App Home, /countersign and a Teams refresh can show the
    # same buttons again; useless to anyone but the person it was issued to.
    token: str = ""
    # The arguments a person may change before approving (the tool's ``editable``), kept so
    # every redraw of the card (a DM copy, the App Home, a card after a first of two
    # approvals) offers Edit too; without it only the card as first posted had the button.
    editable: tuple[str, ...] = ()
    # The person a private copy was sent to (their Countersign id): once they gave the first
    # of two approvals, their copy has nothing left for them to press, and showing Approve
    # again only led to a refusal. Also its asker on a card asked for in their DM, which they
    # alone read. None on the thread's card, shared by everyone there.
    person: int | None = None
    # The answer posted just above this copy by the turn that posted it (Slack's ts, Teams'
    # activity id), and what it said besides the "Not done yet" line ("" for that line alone):
    # once the card is decided the answer is edited to say so (``bot.cards.answered``). It
    # used to read "waiting for your approval" above cards decided long ago.
    reply: str | None = None
    reply_said: str = ""

    def approved_by_reader(self, *records: CardRecord) -> bool:
        """Whether this copy's one reader already approved the card (each of a batch's cards
        still waiting): a first of two."""
        person = self.person
        return person is not None and bool(records) and all(r.approved_by(person) for r in records)


class SlackPlacement(_Copy):
    """A card's message in Slack: workspace (or org), channel, its ts and thread, the issuee."""

    platform: Literal["slack"] = "slack"
    team: str = ""
    channel: str
    ts: str
    thread_ts: str | None = None
    # The Slack user the card was issued to (named on the card, told on a refused press).
    user: str | None = None

    @property
    def owner(self) -> str | None:
        """The issuee as Slack's texts name them: their user id (shown as a mention)."""
        return self.user

    @property
    def one_to_one(self) -> bool:
        """Whether the copy is in a DM with the app (Slack's DM ids begin with D): no channel."""
        return self.channel.startswith("D")


class TeamsPlacement(_Copy):
    """A card's message in Teams: tenant, service URL, conversation and activity, the issuee."""

    platform: Literal["teams"] = "teams"
    tenant: str | None = None
    service_url: str | None = None
    conversation_id: str | None = None
    activity_id: str | None = None
    # The issuee's ``29:`` address (what ``refresh.userIds`` needs) and stable AAD object id.
    user: str | None = None
    aad: str | None = None
    # The issuee's display name, as shown on the card.
    issued_to: str | None = None

    @property
    def owner(self) -> str | None:
        """The issuee as Teams' texts name them: their display name."""
        return self.issued_to

    @property
    def one_to_one(self) -> bool:
        """Whether the copy is in a 1:1 chat with the bot (Teams' personal chat ids begin with
        ``a:``; a channel's with ``19:``): no channel."""
        return (self.conversation_id or "").startswith("a:")


Placement = Annotated[SlackPlacement | TeamsPlacement, Field(discriminator="platform")]
_ONE: TypeAdapter[Placement] = TypeAdapter(Placement)


def _one(data: object) -> Placement | None:
    try:
        return _ONE.validate_python(data)
    except ValidationError:
        return None


class ListPlacement(BaseModel):
    """A private list of a person's cards that showed this card, and how to redraw it in place.

    The list ``/countersign pending`` answers is ephemeral ("Only visible to you"): Slack keeps
    no message id for it, only the command's ``response_url``, which replaces it (30 minutes,
    five uses). Without this the list kept live Approve/Reject on a card Meera had approved
    from her DM, and pressing it was only refused.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    platform: Platform = Platform.SLACK
    # The installation and the platform user who reads the list, and their Countersign id.
    installation: str
    user: str
    person: int
    url: str
    # When the platform stops taking the URL: past it the list is left as it is.
    until: datetime


_LISTS: TypeAdapter[list[ListPlacement]] = TypeAdapter(list[ListPlacement])


def lists_of_stored(where: dict[str, Any] | None) -> tuple[ListPlacement, ...]:
    """The private lists a card's stored ``surface`` value says showed it (none if unreadable)."""
    try:
        return tuple(_LISTS.validate_python((where or {}).get("lists") or []))
    except ValidationError:
        return ()


def placements_of(record: CardRecord | None) -> tuple[Placement, ...]:
    """Every copy of the card this build can show, in the order they were posted."""
    return placements_of_stored(record.posting if record is not None else None)


def placements_of_stored(where: dict[str, Any] | None) -> tuple[Placement, ...]:
    """Every copy a card's stored ``surface`` value describes (see ``placements_of``)."""
    if not where:
        return ()
    copies: object = where.get("copies")
    items: Sequence[object] = copies if isinstance(copies, list) else [where]
    found = (_one(item) for item in items)
    return tuple(p for p in found if p is not None)


def stored(placements: Sequence[Placement], lists: Sequence[ListPlacement] = ()) -> dict[str, Any]:
    """The JSON the card's ``surface`` column holds for these copies (flat for one copy) and
    the private lists that showed it."""
    # A card with nothing to edit, or no reader of its own, is stored with exactly the keys
    # it always was.
    dumped = [p.model_dump(mode="json", exclude=_unset(p)) for p in placements]
    kept: dict[str, Any] = dict(dumped[0]) if len(dumped) == 1 else {"copies": dumped}
    if lists:
        kept["lists"] = [listed.model_dump(mode="json") for listed in lists]
    return kept


def _unset(placement: Placement) -> set[str]:
    return {k for k in ("editable", "person", "reply", "reply_said") if not getattr(placement, k)}


def same_message(one: Placement, other: Placement) -> bool:
    """Whether two copies name the same message (kept with more or fewer of its details)."""
    if isinstance(one, SlackPlacement) and isinstance(other, SlackPlacement):
        return (one.channel, one.ts) == (other.channel, other.ts)
    if isinstance(one, TeamsPlacement) and isinstance(other, TeamsPlacement):
        return (one.conversation_id, one.activity_id) == (other.conversation_id, other.activity_id)
    return False


def first_copy(
    placement: Placement,
) -> Callable[[dict[str, Any] | None], dict[str, Any]]:
    """The change of a card's stored copies that records ``placement`` as its first copy (the
    one asked in, whose thread gets the audit line), keeping every other copy and list."""

    def change(where: dict[str, Any] | None) -> dict[str, Any]:
        kept = [p for p in placements_of_stored(where) if not same_message(p, placement)]
        return stored([placement, *kept], lists_of_stored(where))

    return change


def first(record: CardRecord | None, platform: Platform) -> Placement | None:
    """The card's first copy on ``platform``, or None."""
    return next((p for p in placements_of(record) if p.platform == platform), None)


def editable_of(record: CardRecord | None) -> tuple[str, ...]:
    """The arguments a person may change on the card, as its copies were posted with them."""
    return next((p.editable for p in placements_of(record) if p.editable), ())
