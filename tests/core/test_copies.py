"""Private copies of a card, against the recording fake of the surface."""

from __future__ import annotations

from bot.cards import card as cards
from tests.core.conftest import TEAM, Core


async def test_each_approver_gets_a_copy_saying_who_asked(core: Core) -> None:
    """Ravi (staff) asks: each manager gets a private copy whose notification names him, and
    every copy is stored with the card so whoever decides it redraws them all."""
    await core.ask("URAVI", 1)
    sent = core.fake.called("send_copy")
    assert sorted(c.args["to"] for c in sent) == ["UARJUN", "UMEERA"]
    assert all("Ravi Kumar" in c.args["push"] for c in sent)
    card = await cards.load(core.registry, sent[0].args["card"])
    assert card is not None
    assert [p.user for p in card.placements] == [None, *(c.args["to"] for c in sent)]


async def test_an_approver_never_seen_is_found_by_verified_email_and_linked(core: Core) -> None:
    """Meera never wrote to the app: the platform finds her by the email it verified, she is
    linked, and she gets her copy."""
    assert await core.services.directory.resolve("slack", TEAM, "UMEERA") is None
    await core.ask("URAVI", 1)
    assert [c.args["email"] for c in core.fake.called("member_by_email")] == [
        "meera@fiesta.example"
    ]
    meera = await core.services.directory.resolve("slack", TEAM, "UMEERA")
    assert meera is not None and meera.name == "Meera Iyer"


async def test_an_approver_the_platform_cannot_reach_gets_no_copy(core: Core) -> None:
    """A copy the platform refuses is not stored: the card keeps the copies that exist."""
    core.fake.unreachable.add("UMEERA")
    await core.ask("URAVI", 1)
    card_id = core.fake.called("post_card")[0].args["card"]
    card = await cards.load(core.registry, card_id)
    assert card is not None
    assert [p.user for p in card.placements] == [None, "UARJUN"]


async def test_a_card_of_several_sends_one_copy_per_approver(core: Core) -> None:
    """Ravi's "approve requests 1 and 2" is one card: each manager gets one copy of it (not
    one per write), saying how many changes it holds."""
    await core.ask("URAVI", 1, 2)
    sent = core.fake.called("send_copy")
    assert sorted(c.args["to"] for c in sent) == ["UARJUN", "UMEERA"]
    assert all("2 changes" in c.args["push"] for c in sent)
    assert len({c.args["card"] for c in sent}) == 1
