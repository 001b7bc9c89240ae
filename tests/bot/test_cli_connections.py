"""`countersign connect`, `disconnect`, `connections` and `invite`, run through the real parser and commands."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from tests.bot.test_cli import assert_one_line_failure, cli
from tools.db import Database
from tools.people.connections import Connections, Platform


async def _tenant_of(url: str, platform: str, installation: str) -> int | None:
    db = Database(url)
    try:
        return await Connections(db).tenant_of(platform, installation)
    finally:
        await db.dispose()


def test_connect_list_disconnect(tmp_path: Path, demo_url: str) -> None:
    """Connecting names the workspace and merchant, the table lists it, disconnecting frees it."""
    ran = cli(tmp_path, demo_url, "connect", "slack", "T0NEWSHOP", "fiesta")
    assert ran.code == 0, ran
    assert ran.out.startswith("Connected the Slack workspace T0NEWSHOP to Fiesta Foods.")
    assert asyncio.run(_tenant_of(demo_url, "slack", "T0NEWSHOP")) == 1
    listed = cli(tmp_path, demo_url, "connections")
    header = ["merchant", "platform", "installation", "connected", "(UTC)"]
    assert listed.out.splitlines()[0].split() == header
    assert ["Fiesta", "Foods", "slack", "T0NEWSHOP"] in [
        line.split()[:4] for line in listed.out.splitlines()
    ]
    gone = cli(tmp_path, demo_url, "disconnect", "slack", "T0NEWSHOP")
    assert gone.code == 0, gone
    assert "Disconnected the Slack workspace T0NEWSHOP from Fiesta Foods" in gone.out
    assert asyncio.run(_tenant_of(demo_url, "slack", "T0NEWSHOP")) is None
    assert "T0NEWSHOP" not in cli(tmp_path, demo_url, "connections").out


def test_connecting_another_merchants_workspace_is_one_line_exit_1(
    tmp_path: Path, demo_url: str
) -> None:
    """A workspace of one merchant cannot be connected to another; the line says how to free it."""
    assert cli(tmp_path, demo_url, "connect", "teams", "guid-1", "Fiesta Foods").code == 0
    ran = cli(tmp_path, demo_url, "connect", "teams", "guid-1", "Harbor Books")
    assert_one_line_failure(ran, "already connected", "countersign disconnect teams guid-1")
    assert asyncio.run(_tenant_of(demo_url, "teams", "guid-1")) == 1


def test_connect_to_an_unknown_merchant_lists_the_merchants(tmp_path: Path, demo_url: str) -> None:
    """A typo in the merchant's name is one line that lists the merchants there are."""
    ran = cli(tmp_path, demo_url, "connect", "slack", "T0X", "Fiesta Fods")
    assert_one_line_failure(ran, "There is no merchant 'Fiesta Fods'", "1 (Fiesta Foods)")


def test_invite_prints_a_one_time_install_link(tmp_path: Path, demo_url: str) -> None:
    """`invite` prints a link whose code connects exactly one workspace to that merchant."""
    ran = cli(tmp_path, demo_url, "invite", "Harbor Books")
    assert ran.code == 0, ran
    found = re.search(r"/slack/install\?invite=([A-Za-z0-9_-]+)", ran.out)
    assert found, ran.out
    assert "works once" in ran.out
    code = found.group(1)

    async def redeem() -> int:
        db = Database(demo_url)
        try:
            made = await Connections(db).redeem(code, Platform.SLACK, "T0BOOKS2")
            return made.tenantid
        finally:
            await db.dispose()

    assert asyncio.run(redeem()) == 2


def test_policy_set_then_show(tmp_path: Path, demo_url: str) -> None:
    """`policy set` stores the parts given, in the merchant's money, and `show` reads them back."""
    options = ("--approver-role", "manager", "--two-approvers-from", "25,000")
    ran = cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods", *options)
    assert ran.code == 0, ran
    assert "manager or above" in ran.out and "from ₹25,000.00" in ran.out
    cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods", "--escalate-after", "600")
    shown = cli(tmp_path, demo_url, "policy", "show", "fiesta").out
    assert "from ₹25,000.00" in shown and "after 600 seconds" in shown
    off = cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods", "--two-approvers-from", "off")
    assert "two approvers needed   never" in off.out
    assert (
        "after 900 seconds (the service's default)"
        in cli(tmp_path, demo_url, "policy", "show", "Harbor Books").out
    )


def test_policy_says_the_window_and_who_approves_their_own(tmp_path: Path, demo_url: str) -> None:
    """`policy show` says over how long what moved adds up and the self-approval rule;
    `policy set --self-approval never --two-approvers-window 2h` changes both."""
    shown = cli(tmp_path, demo_url, "policy", "show", "Fiesta Foods").out
    assert "counted over           the last 24 hours" in shown
    assert "own requests           not-own-requests: nobody approves a request they raised" in shown
    options = ("--self-approval", "never", "--two-approvers-window", "2h")
    ran = cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods", *options)
    assert ran.code == 0, ran
    shown = cli(tmp_path, demo_url, "policy", "show", "Fiesta Foods").out
    assert "the last 2 hours" in shown and "own requests           never:" in shown
    off = cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods", "--two-approvers-window", "off")
    assert "counted over           each card's own amount only" in off.out
    bad = cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods", "--two-approvers-window", "soon")
    assert bad.code != 0 and "not a duration like 24h" in bad.err


def test_policy_set_with_a_bad_amount_changes_nothing(tmp_path: Path, demo_url: str) -> None:
    """A bad amount is one line saying what to give, and the stored policy stays as it was."""
    ran = cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods", "--two-approvers-from", "lots")
    assert_one_line_failure(ran, "'lots' is not an amount of money", "like 25000, or off")
    assert "from ₹25,000.00" in cli(tmp_path, demo_url, "policy", "show", "Fiesta Foods").out
    nothing = cli(tmp_path, demo_url, "policy", "set", "Fiesta Foods")
    assert_one_line_failure(nothing, "Nothing to change")
