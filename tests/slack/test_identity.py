"""Who a Slack user is: only a person of the merchant their connected workspace belongs to.

Each test replays an attack that worked before connections existed: a Slack Connect stranger
claiming the owner's email, an unconfirmed email, a workspace nobody connected.
"""

from __future__ import annotations

from sqlalchemy import delete, func, select
from structlog.testing import capture_logs

from bot.sandbox.payloads import TEAM, home_opened, message
from tests.slack.conftest import CHANNEL, Bot, card_id
from tests.slack.test_block_actions import _press_from_team, card_for, request_status
from tests.slack.test_commands import slash
from tools.people.connections import Platform
from tools.toolsets.merchant.models import Branch, Identity

FOREIGN_TEAM = "T0OTHERCO"


def _meeras_namesake(bot: Bot) -> None:
    """A Slack Connect user of an unconnected workspace whose profile carries Meera's email,
    confirmed by Slack: his own workspace is all that tells him apart from her."""
    bot.slack.add_user("UFOREIGN", "Meera I", "meera@fiesta.example", team=FOREIGN_TEAM)


async def _forget(bot: Bot, user: str) -> None:
    async with bot.services.db.session(write=True) as session, session.begin():
        await session.execute(delete(Identity).where(Identity.platform_user_id == user))


async def _identities(bot: Bot, user: str) -> int:
    async with bot.services.db.session() as session:
        stmt = select(func.count()).select_from(Identity).where(Identity.platform_user_id == user)
        return int(await session.scalar(stmt) or 0)


async def _said_in_thread(bot: Bot, thread: str) -> list[str]:
    return [m.text for m in bot.slack.messages if m.thread_ts == thread and m.user != "UFOREIGN"]


async def test_a_slack_connect_stranger_claiming_the_owners_email_sees_nothing(bot: Bot) -> None:
    """A user of another workspace in a shared channel, whose profile claims Priya's email with
    no is_email_confirmed, asks for pending requests: he is told to get linked and sees no data."""
    bot.slack.add_user(
        "UFOREIGN", "Mallory", "priya@fiesta.example", team=FOREIGN_TEAM, email_confirmed=None
    )
    ts = bot.ts()
    mention = message(
        "UFOREIGN",
        "<@UBOT> pending requests",
        channel=CHANNEL,
        ts=ts,
        kind="app_mention",
        team=FOREIGN_TEAM,
        user_team=FOREIGN_TEAM,
    )
    await bot.send(mention)
    replies = [m.text for m in bot.slack.messages if m.thread_ts == ts]
    assert replies and all("link you" in text for text in replies), replies
    assert not any("Restock" in text or "Whitefield" in text for text in replies)
    assert await _identities(bot, "UFOREIGN") == 0


async def test_a_stranger_cannot_approve_the_owners_card(bot: Bot) -> None:
    """Priya asks to close Whitefield; the stranger presses Approve on her card: refused, and
    Whitefield stays open."""
    bot.slack.add_user(
        "UFOREIGN", "Mallory", "priya@fiesta.example", team=FOREIGN_TEAM, email_confirmed=None
    )
    _, card = await card_for(bot, "UPRIYA", "close branch Whitefield")
    await bot.interact(_press_from_team(card, "UFOREIGN", FOREIGN_TEAM))
    async with bot.services.db.session() as session:
        assert (await session.get(Branch, 3)).status == "open"  # type: ignore[union-attr]
    assert any("link you" in text for text in bot.ephemerals("UFOREIGN"))


async def test_only_a_confirmed_email_links(bot: Bot) -> None:
    """A second account of this workspace with Priya's email links only once Slack confirms it;
    an absent or false is_email_confirmed is not a confirmation."""
    for user, confirmed in (("UNOFLAG", None), ("UFALSE", False), ("UCONFIRMED", True)):
        bot.slack.add_user(user, "Priya R", "priya@fiesta.example", email_confirmed=confirmed)
        await bot.mention(user, "pending requests")
    assert await _identities(bot, "UNOFLAG") == 0
    assert await _identities(bot, "UFALSE") == 0
    assert await _identities(bot, "UCONFIRMED") == 1


async def test_a_workspace_not_connected_is_told_so_and_sees_nothing(bot: Bot) -> None:
    """Once the workspace is disconnected, even a linked manager is told it is not connected,
    and gets no data."""
    await bot.services.directory.connections.disconnect(Platform.SLACK, TEAM)
    thread = await bot.mention("UARJUN", "pending requests")
    replies = await _said_in_thread(bot, thread)
    assert len(replies) == 1 and "not connected to a merchant" in replies[0], replies
    assert "Restock" not in replies[0]


async def test_a_card_of_a_disconnected_workspace_cannot_be_approved(bot: Bot) -> None:
    """A card posted while connected is refused once the workspace is disconnected."""
    _, card = await card_for(bot, "UARJUN")
    await bot.services.directory.connections.disconnect(Platform.SLACK, TEAM)
    await bot.press("UARJUN", card)
    assert await request_status(bot, 3) == "pending"
    assert any("not connected" in text for text in bot.ephemerals("UARJUN"))


async def test_a_slack_connect_user_with_a_confirmed_email_gets_no_pending_list(bot: Bot) -> None:
    """Meera's namesake from an unconnected workspace runs `/countersign pending` in the shared
    channel while a card waits for Meera: he is told to get linked, sees no card, and is not
    linked as her (a slash command names the installation, never the user's own workspace)."""
    _meeras_namesake(bot)
    await bot.mention("URAVI", "approve request 1")
    await slash(bot, "UFOREIGN", "pending")
    answer = bot.slack.responses[-1]
    assert "don't know who you are" in answer["text"], answer
    assert not [b for b in answer.get("blocks") or [] if b["type"] == "actions"]
    assert await _identities(bot, "UFOREIGN") == 0


async def test_a_slack_connect_user_with_a_confirmed_email_gets_no_app_home(bot: Bot) -> None:
    """Opening the App Home, Meera's namesake is shown how to get linked, not her waiting cards."""
    _meeras_namesake(bot)
    await bot.mention("URAVI", "approve request 1")
    await bot.send(home_opened("UFOREIGN", channel=bot.dm("UFOREIGN")))
    view = bot.home("UFOREIGN")
    assert not [b for b in view["blocks"] if b["type"] == "actions"]
    assert "don't know who you are" in str(view["blocks"])
    assert await _identities(bot, "UFOREIGN") == 0


async def test_a_slack_connect_user_cannot_make_a_shared_channel_the_audit_channel(
    bot: Bot,
) -> None:
    """`/countersign audit here` from Meera's namesake is refused: every Fiesta decision would
    otherwise be posted into a channel his own workspace sees."""
    _meeras_namesake(bot)
    await slash(bot, "UFOREIGN", "audit here")
    assert "don't know who you are" in bot.slack.responses[-1]["text"]
    found = await bot.services.directory.connections.connection("slack", TEAM)
    assert found is not None and found.audit_channel is None


async def test_a_slack_connect_user_who_ran_a_command_gets_no_dm_copies(bot: Bot) -> None:
    """Meera has not written to the app yet; her namesake runs `/countersign pending`. Ravi's
    card for the managers then reaches Meera's DM, and none reaches his."""
    await _forget(bot, "UMEERA")
    _meeras_namesake(bot)
    await slash(bot, "UFOREIGN", "pending")
    await bot.mention("URAVI", "approve request 1")
    [card] = bot.cards()
    assert bot.cards(bot.dm("UFOREIGN")) == []
    [copy] = bot.cards(bot.dm("UMEERA"))
    assert card_id(copy) == card_id(card)


async def test_a_copy_is_not_sent_to_a_slack_connect_user_found_by_email(bot: Bot) -> None:
    """Meera is not in this Slack at all, and Slack finds her email only on her namesake's
    account in another workspace: no copy goes to him, and he is not linked as her."""
    await _forget(bot, "UMEERA")
    del bot.slack.workspace.users["UMEERA"]
    _meeras_namesake(bot)
    await bot.mention("URAVI", "approve request 1")
    assert [c["email"] for c in bot.slack.called("users.lookupByEmail")] == ["meera@fiesta.example"]
    assert bot.cards(bot.dm("UFOREIGN")) == []
    assert await _identities(bot, "UFOREIGN") == 0


EVIL_TEAM = "T0EVILCO"


def _meeras_impostor(bot: Bot) -> None:
    """A user whose profile says he is of T0EVILCO, a workspace nobody connected, and carries
    Meera's email, confirmed by Slack."""
    bot.slack.add_user("UEVIL", "Meera I", "meera@fiesta.example", team=EVIL_TEAM)


async def test_an_event_naming_the_installation_does_not_link_a_user_of_another_workspace(
    bot: Bot,
) -> None:
    """A mention without ``user_team`` whose ``team`` is Fiesta's, from a user Slack's profile
    puts in T0EVILCO: he is told to get linked, sees no data, is not linked as Meera, and one
    warning names the installation, the user and the profile's workspace (not the email)."""
    _meeras_impostor(bot)
    with capture_logs() as logs:
        thread = await bot.mention("UEVIL", "pending requests")
    replies = [m.text for m in bot.slack.messages if m.thread_ts == thread and m.user == "UBOT"]
    assert replies and all("link you" in text for text in replies), replies
    assert not any("Restock" in text or "Whitefield" in text for text in replies)
    assert await _identities(bot, "UEVIL") == 0
    [refused] = [e for e in logs if e["event"] == "identity_home_mismatch"]
    assert refused["log_level"] == "warning"
    assert (refused["installation"], refused["user"], refused["home"]) == (
        TEAM,
        "UEVIL",
        [EVIL_TEAM],
    )
    assert "meera@fiesta.example" not in str(logs)


async def test_a_user_of_another_workspace_cannot_approve_after_an_event_naming_ours(
    bot: Bot,
) -> None:
    """The impostor writes once (his event naming Fiesta's workspace), then presses Approve on
    Ravi's card for the managers with a press that also names Fiesta's: refused, request 2
    stays pending, and he is told to get linked."""
    _meeras_impostor(bot)
    _, card = await card_for(bot, "URAVI", "approve request 2")
    await bot.mention("UEVIL", "pending requests")
    await bot.press("UEVIL", card)
    assert await request_status(bot, 2) == "pending"
    assert any("link you" in text for text in bot.ephemerals("UEVIL"))
    assert await _identities(bot, "UEVIL") == 0


async def test_a_user_of_a_workspace_connected_to_the_same_merchant_is_linked(bot: Bot) -> None:
    """Slack Connect, legitimately: Meera's second account lives in T0FIESTA2, which Fiesta
    connected too; her first mention (naming the installation's team) links her and she is
    answered with data."""
    await bot.services.directory.connections.connect(Platform.SLACK, "T0FIESTA2", 1)
    bot.slack.add_user("UMEERA2", "Meera Iyer", "meera@fiesta.example", team="T0FIESTA2")
    thread = await bot.mention("UMEERA2", "pending requests")
    replies = [m.text for m in bot.slack.messages if m.thread_ts == thread and m.user == "UBOT"]
    assert not any("link you" in text for text in replies), replies
    assert await _identities(bot, "UMEERA2") == 1


async def test_a_user_of_this_workspace_is_linked_on_first_contact(bot: Bot) -> None:
    """The ordinary case: a new account of Fiesta's own workspace with a confirmed Fiesta email
    is linked by its first mention and answered."""
    await _forget(bot, "UMEERA")
    thread = await bot.mention("UMEERA", "pending requests")
    replies = [m.text for m in bot.slack.messages if m.thread_ts == thread and m.user == "UBOT"]
    assert not any("link you" in text for text in replies), replies
    assert await _identities(bot, "UMEERA") == 1


async def test_a_grid_member_of_the_installed_workspace_homed_in_another_is_linked(
    bot: Bot,
) -> None:
    """Enterprise Grid, installed in Fiesta's workspace only: Meera's account is homed in the
    org's other workspace and is a member of Fiesta's too (``enterprise_user.teams``); her first
    mention links her."""
    bot.slack.workspace.add_team(TEAM, "Fiesta Foods", enterprise="E0FIESTA")
    bot.slack.workspace.add_team("T0FIESTAB", "Fiesta Ops", enterprise="E0FIESTA")
    await _forget(bot, "UMEERA")
    bot.slack.workspace.users["UMEERA"].team = "T0FIESTAB"
    bot.slack.workspace.users["UMEERA"].org_teams = (TEAM,)
    thread = await bot.mention("UMEERA", "pending requests")
    replies = [m.text for m in bot.slack.messages if m.thread_ts == thread and m.user == "UBOT"]
    assert not any("link you" in text for text in replies), replies
    assert await _identities(bot, "UMEERA") == 1
