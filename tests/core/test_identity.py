"""Who pressed, against the recording fake of the surface: the refusals before any decision."""

from __future__ import annotations

from bot import presses
from tests.core.conftest import TEAM, Core
from tests.support.fake_surface import Member


async def test_a_member_without_a_verified_email_is_told_to_get_linked(core: Core) -> None:
    """Somebody whose email the platform did not verify is nobody: told to ask to be linked,
    and nothing about the card is decided or shown."""
    core.fake.members["USTRANGER"] = Member("priya@fiesta.example", verified=False)
    copy = await core.ask("UARJUN", 1)
    ended = await core.press("USTRANGER", copy)
    assert (ended.outcome, ended.caller) == ("unlinked", None)
    assert core.fake.told("USTRANGER") == ["not_linked"]
    assert core.fake.called("update") == []


async def test_a_member_of_another_workspace_is_refused(core: Core) -> None:
    """A verified Fiesta email on a user whose own workspace nobody connected (Slack
    Connect) links nobody: the press is refused as unlinked."""
    core.fake.members["UGUEST"] = Member("meera@fiesta.example", team="T0ELSEWHERE")
    copy = await core.ask("UARJUN", 1)
    ended = await core.press("UGUEST", copy)
    assert ended.outcome == "unlinked"
    assert core.fake.told("UGUEST") == ["not_linked"]
    assert await core.services.directory.resolve("slack", TEAM, "UGUEST") is None


async def test_an_installation_nobody_connected_reaches_nothing(core: Core) -> None:
    """A press arriving from a workspace no merchant connected is told so, and decides nothing."""
    copy = await core.ask("UARJUN", 1)
    press = presses.Press(installation="T0NOBODY", user="UARJUN", token=copy.token, verb="approve")
    ended = await presses.decide(core.services, core.fake.adapter("UARJUN"), press)
    assert ended.outcome == "unlinked"
    assert core.fake.told("UARJUN") == ["not_connected"]


async def test_a_verified_member_is_linked_on_their_first_press(core: Core) -> None:
    """Priya, the owner, never wrote to the app: her first press links her by the email the
    platform verified, and she is refused only as someone the card was not issued to."""
    copy = await core.ask("UARJUN", 1)
    ended = await core.press("UPRIYA", copy)
    assert ended.outcome == "refused" and ended.caller is not None
    assert ended.caller.name == "Priya Raman"
    assert core.fake.told("UPRIYA") == ["not_your_card:UARJUN"]


async def test_a_press_naming_the_installation_does_not_link_a_member_of_another_workspace(
    core: Core,
) -> None:
    """The press says the presser's own workspace is the installation, but the platform's
    profile says T0EVILCO: nobody is linked, the press is refused as unlinked, and the card
    is not touched."""
    core.fake.members["UEVIL"] = Member("meera@fiesta.example", team="T0EVILCO")
    copy = await core.ask("URAVI", 1)
    card_id = next(c.args["card"] for c in core.fake.calls if c.args.get("copy") == copy)
    press = presses.Press(
        installation=TEAM,
        user="UEVIL",
        token=copy.token,
        verb="approve",
        card_id=card_id,
        user_team=TEAM,
    )
    ended = await presses.decide(core.services, core.fake.adapter("UEVIL"), press)
    assert (ended.outcome, ended.caller) == ("unlinked", None)
    assert core.fake.told("UEVIL") == ["not_linked"]
    assert core.fake.called("update") == []
    assert await core.services.directory.resolve("slack", TEAM, "UEVIL") is None
