"""The core on a real database, with the recording fake of the surface protocol and no platform."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

import pytest

from bot import presses
from bot.adapter import Steps, Stream
from bot.cards.cardspec import Verdict
from bot.placement import Placement, SlackPlacement
from bot.services import ModelReply, Services
from bot.turns import posting
from tests.support.clock import SteppedClock
from tests.support.fake_surface import FakePlatform, Member
from tools import Caller, CardSigner, ProcessLease, Proposal, Registry
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry

TEAM = "T0FIESTA"  # connected to Fiesta Foods by the demo data
MEMBERS = {
    "UPRIYA": Member("priya@fiesta.example"),
    "UARJUN": Member("arjun@fiesta.example"),
    "UMEERA": Member("meera@fiesta.example"),
    "URAVI": Member("ravi@fiesta.example"),
}
LINKED = ("UARJUN", "URAVI")


@dataclass
class Notes:
    """A model that is only told things: what each conversation heard about its cards."""

    heard: list[tuple[str, str]] = field(default_factory=list)
    # The platform whose ``dies_at`` may name "noted": the process dies telling the model.
    platform: FakePlatform | None = None

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> ModelReply:
        raise AssertionError("the core tests never ask the model")

    async def record(self, *, conversation: str, text: str) -> None:
        if self.platform is not None:
            self.platform.dying("noted")
        self.heard.append((conversation, text))

    async def aclose(self) -> None:
        return None


@dataclass
class Core:
    """The core's dependencies and the fake platform it speaks to."""

    services: Services
    registry: Registry
    fake: FakePlatform
    notes: Notes
    clock: SteppedClock
    signer: CardSigner

    async def caller(self, user: str) -> Caller:
        found = await self.services.directory.resolve("slack", TEAM, user)
        assert found is not None, user
        return found

    async def propose(self, user: str, *requests: int) -> list[Proposal]:
        """``user`` asks for each request to be approved: the cards the model would propose."""
        caller = await self.caller(user)
        proposals = []
        for request in requests:
            result = await self.registry.call(
                DEFAULT_AGENT, "approve_request", {"request_id": request}, caller
            )
            assert result.proposal is not None
            proposals.append(result.proposal)
        return proposals

    async def process(self) -> Services:
        """Another server on the same database, its lease started (stop it to have it gone)."""
        db = self.services.db
        lease = ProcessLease(db, clock=self.clock)
        registry = build_registry(db, self.signer, clock=self.clock, lease=lease)
        await lease.start()
        return Services(registry, self.notes, self.services.directory, db=db, lease=lease)

    async def ask(
        self, user: str, *requests: int, services: Services | None = None
    ) -> SlackPlacement:
        """``user`` asks in the channel; the turn's cards are posted (several as one card), by
        ``surface``'s process (this one's unless given). Returns where the last card went."""
        services = services or self.services
        proposals = await self.propose(user, *requests)
        adapter, caller = self.fake.adapter(user), await self.caller(user)
        conversation = f"thread-{user}"
        left = await posting.post_turn_cards(
            services,
            adapter,
            proposals,
            caller=caller,
            conversation=conversation,
            installation=TEAM,
        )
        for proposal in left:
            await posting.post_card(
                services,
                adapter,
                proposal,
                caller=caller,
                conversation=conversation,
                installation=TEAM,
            )
        posted = self.fake.called("post_card")[-1].args["copy"]
        assert isinstance(posted, SlackPlacement)
        return posted

    async def press(
        self,
        user: str,
        copy: Placement,
        verb: Verdict = "approve",
        reason: str = "",
        *,
        services: Services | None = None,
    ) -> presses.Ended:
        """``user`` presses a button on ``copy`` (its token, and the card it was drawn for),
        handled by ``surface``'s process (this one's unless given)."""
        card_id = next(c.args["card"] for c in self.fake.calls if c.args.get("copy") == copy)
        press = presses.Press(
            installation=TEAM,
            user=user,
            token=copy.token,
            verb=verb,
            card_id=card_id,
            reason=reason,
        )
        return await presses.decide(services or self.services, self.fake.adapter(user), press)


@pytest.fixture
async def core(db: Database) -> Core:
    clock = SteppedClock()
    secret = "card-secret-for-core-tests-0123456789"
    signer = CardSigner([secret], ttl=timedelta(minutes=30), clock=clock)
    lease = ProcessLease(db, clock=clock)
    registry = build_registry(db, signer, clock=clock, lease=lease)
    directory = Directory(db)
    for user in LINKED:
        email = MEMBERS[user].email
        assert email is not None
        await directory.link("slack", TEAM, user, email)
    fake = FakePlatform(TEAM, dict(MEMBERS))
    notes = Notes(platform=fake)
    services = Services(registry, notes, directory, db=db, lease=lease)
    return Core(services, registry, fake, notes, clock, signer)
