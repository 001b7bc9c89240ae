"""A recording fake of the surface protocol (``bot.adapter.Adapter``), after httpx's ``MockTransport``.

``FakePlatform`` is a chat platform with no wire: its members (their verified email, their own
workspace), the messages the bot posted, and a log of every call the core made, in order.
``FakePlatform.adapter(user)`` is a real ``Adapter`` bound to one request (who sent it, where),
answering what a platform would: a placement for a posted card or a private copy, True for an
update, a member for an email it vouches for. Tests of the core (presses, decisions, copies,
identity) run against it without Slack or Teams; ``unreachable`` and ``failing`` make a copy or
an update fail as a platform may. ``dies_at`` kills the process making a call (``ProcessDied``,
which nothing catches), and ``on_post`` lets a press land while a card or copy is on its way.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.adapter import Form, Home, Listing, Words
from bot.cards.card import Card, Fresh
from bot.placement import ListPlacement, Placement, Platform, SlackPlacement
from tools import Caller, Scope

__all__ = [
    "Call",
    "FakeAdapter",
    "FakePlatform",
    "FakeShows",
    "Member",
    "PlainWords",
    "ProcessDied",
]


class ProcessDied(BaseException):
    """The process making a call was killed there: nothing it would have done next happens.

    A BaseException, as a SIGKILL is nothing any handler of the core sees."""


@dataclass(frozen=True, slots=True)
class Call:
    """One call the core made: the method, who the adapter was bound to, and what it was given
    (for a card: its id, and its title, status and buttons as that copy shows them)."""

    method: str
    user: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Member:
    """A member of the platform: their email, whether the platform verified it, their own
    workspace (a Slack Connect user's is not the installation)."""

    email: str | None
    verified: bool = True
    team: str | None = None


class PlainWords:
    """The surface's sentences as tags a test can match: ``not_your_card:UARJUN``."""

    def not_linked(self) -> str:
        return "not_linked"

    def not_connected(self) -> str:
        return "not_connected"

    def model_failed(self) -> str:
        return "model_failed"

    def database_unreachable(self) -> str:
        return "database_unreachable"

    def message_database_unreachable(self) -> str:
        return "message_database_unreachable"

    def press_failed(self) -> str:
        return "press_failed"

    def refused(self, message: str) -> str:
        return f"refused:{message}"

    def not_your_card(self, owner: str | None, waiting: tuple[str, ...] = ()) -> str:
        return f"not_your_card:{owner or ''}"

    def reply(self, text: str) -> str:
        return text

    def new_tools(self, merchant: str, source: str, tools: Mapping[str, Scope]) -> str:
        return f"new_tools:{merchant}:{source}:{','.join(sorted(tools))}"


@dataclass
class FakePlatform:
    """One installation of a platform with no wire: its members, and every call made to it."""

    installation: str
    members: dict[str, Member]
    platform: Platform = "slack"
    channel: str = "C0OPS"
    calls: list[Call] = field(default_factory=list)
    # Members no private copy reaches (no DM with the app), and copies whose update fails.
    unreachable: set[str] = field(default_factory=set)
    failing: set[str] = field(default_factory=set)
    # The call the process making it dies at: its method, and how many of them go through
    # first. It raises ProcessDied instead of taking effect.
    dies_at: tuple[str, int] | None = None
    # Called once a card or a copy is on the platform, before the core hears where it went:
    # what a person does with it meanwhile.
    on_post: Callable[[Placement], Awaitable[None]] | None = None
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def adapter(self, user: str, *, channel: str | None = None) -> FakeAdapter:
        """An adapter bound to a request from ``user`` (in the channel, unless given another)."""
        return FakeAdapter(self, user, channel or self.channel)

    def dying(self, method: str) -> None:
        """Raises ProcessDied if the process dies at this call (``dies_at``)."""
        if self.dies_at is None or self.dies_at[0] != method:
            return
        if self.dies_at[1] > 0:
            self.dies_at = (method, self.dies_at[1] - 1)
            return
        self.dies_at = None
        raise ProcessDied(method)

    async def posted(self, placement: Placement) -> None:
        """Lets ``on_post`` act on a card or copy just posted, once."""
        hook, self.on_post = self.on_post, None
        if hook is not None:
            await hook(placement)

    def called(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def told(self, user: str) -> list[str]:
        """What ``user`` was told privately, in order."""
        return [c.args["text"] for c in self.called("post_privately") if c.user == user]

    def next_ts(self) -> str:
        return f"1800000000.{next(self._ts):06d}"


def _shown(card: Card, placement: Placement) -> dict[str, Any]:
    """What a copy shows of the card, as a test reads it: its title, status and buttons."""
    spec = card.spec(token=placement.token)
    return {
        "card": card.card_id,
        "copy": placement,
        "title": spec.title,
        "status": spec.status,
        "buttons": [a.verb for a in spec.actions],
        "progress": spec.progress,
        "items": len(card.items),
        "reader_approved": placement.approved_by_reader(*card.live),
    }


class FakeAdapter:
    """The core's ``Adapter`` over a ``FakePlatform``, bound to one request's sender."""

    def __init__(self, platform: FakePlatform, user: str, channel: str) -> None:
        self.fake, self.user, self.channel = platform, user, channel

    @property
    def platform(self) -> Platform:
        return self.fake.platform

    @property
    def words(self) -> Words:
        return PlainWords()

    def _record(self, method: str, **args: Any) -> None:
        self.fake.calls.append(Call(method, self.user, args))

    async def verified_email(self, user: str) -> str | None:
        member = self.fake.members.get(user)
        return member.email if member is not None and member.verified else None

    async def home_of(self, user: str) -> Home | None:
        member = self.fake.members.get(user)
        return Home(member.team or self.fake.installation) if member is not None else None

    async def member_by_email(self, email: str) -> str | None:
        self._record("member_by_email", email=email)
        return next(
            (
                user
                for user, m in self.fake.members.items()
                if m.verified and m.email and m.email.lower() == email.lower()
            ),
            None,
        )

    async def post(self, text: str) -> str | None:
        self._record("post", text=text)
        return None

    async def edit_answer(self, placement: Placement, text: str) -> bool:
        self._record("edit_answer", placement=placement, text=text)
        return True

    async def post_card(self, fresh: Fresh, *, caller: Caller, conversation: str) -> Placement:
        self.fake.dying("post_card")
        spec = fresh.spec(issued_to=caller.name or None)
        routed = fresh.routing is not None and [i.userid for i in fresh.routing.issued_to] != [
            caller.userid
        ]
        placement = SlackPlacement(
            team=self.fake.installation,
            channel=self.channel,
            ts=self.fake.next_ts(),
            # The one person a refused presser is told it belongs to: none once routed.
            user=None if routed else self.user,
            conversation=conversation,
            token=fresh.token,
        )
        self._record("post_card", card=fresh.card_id, title=spec.title, copy=placement)
        await self.fake.posted(placement)
        return placement

    async def update(self, card: Card, placement: Placement) -> Placement | bool:
        self.fake.dying("update")
        self._record("update", **_shown(card, placement))
        assert isinstance(placement, SlackPlacement)
        return placement.ts not in self.fake.failing

    async def update_list(self, where: ListPlacement, listing: Listing) -> bool:
        mine = [c.card_id for c in listing.mine]
        decided = listing.decided.card_id if listing.decided else None
        self._record("update_list", url=where.url, mine=mine, decided=decided)
        return True

    async def post_audit(
        self, card: Card, placement: Placement, *, audit_channel: str | None = None
    ) -> bool:
        self.fake.dying("post_audit")
        statuses = [str(c.status) for c in card.items]
        self._record("post_audit", card=card.card_id, copy=placement, statuses=statuses)
        return True

    async def post_privately(self, text: str) -> None:
        self._record("post_privately", text=text)

    async def notify(self, user: str, text: str) -> bool:
        self._record("notify", to=user, text=text)
        return user not in self.fake.unreachable

    async def send_copy(self, card: Card, user: str, *, token: str, push: str) -> Placement | None:
        self.fake.dying("send_copy")
        if user in self.fake.unreachable:
            self._record("send_copy", to=user, card=card.card_id, push=push, copy=None)
            return None
        placement = SlackPlacement(
            team=self.fake.installation,
            channel=f"D-{user}",
            ts=self.fake.next_ts(),
            user=user,
            conversation=None,
            token=token,
        )
        self._record("send_copy", to=user, card=card.card_id, push=push, copy=placement)
        await self.fake.posted(placement)
        return placement

    async def typing(self, *, on: bool) -> None:
        self._record("typing", on=on)

    async def open_form(self, form: Form) -> None:
        self._record("open_form", form=form)

    def here(self, placements: Sequence[Placement]) -> Placement | None:
        return next((p for p in placements if p.platform == self.fake.platform), None)


class FakeShows:
    """The fake platform mounted for the sweeps (``bot.presses.sweeps.Shows``): each copy is
    shown through an adapter speaking as the app, and nothing refreshes per person."""

    def __init__(self, platform: FakePlatform) -> None:
        self.fake = platform

    async def with_adapter(
        self, placement: Placement, work: Callable[[FakeAdapter], Awaitable[None]]
    ) -> bool:
        await work(self.fake.adapter("UBOT"))
        return True

    async def cards_changed(self, record: object) -> None:
        return None
