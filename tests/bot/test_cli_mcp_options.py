"""What `countersign mcp add` makes of its per-tool options, before anything is stored."""

from __future__ import annotations

import argparse

import pytest

from bot.cli.failures import CliError
from bot.cli.mcp_options import pairs, rules, secret_warnings
from bot.cli.parser import build_parser


def _parsed(*options: str) -> argparse.Namespace:
    return build_parser().parse_args(["mcp", "add", "Fiesta", "ledger", *options, "--", "x"])


def test_each_option_lands_in_the_rule_of_its_tool() -> None:
    """Role, amount (major by default), targets, editable and both kinds of preview are read
    into the engine's ToolRule fields, a tool named as the model sees it included."""
    found = rules(
        "ledger",
        _parsed(
            *("--role", "ledger__pay=manager", "--amount", "pay=total"),
            *("--amount", "refund=cents:minor", "--target", "pay=supplier, invoice"),
            *("--editable", "pay=total", "--preview", "pay=tool:quote_payment"),
            *("--preview", "edit=dry-run:dryRun"),
        ),
    )
    assert found == {
        "pay": {
            "role": "manager",
            "amount": "total",
            "unit": "major",
            "targets": ["supplier", "invoice"],
            "editable": ["total"],
            "preview": {"kind": "tool", "name": "quote_payment"},
        },
        "refund": {"amount": "cents", "unit": "minor"},
        "edit": {"preview": {"kind": "dry_run", "name": "dryRun"}},
    }


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (("--read", "pay", "--write", "pay"), "both --read and --write"),
        (("--role", "pay=boss"), "the role is one of staff, manager, owner"),
        (("--role", "pay"), "needs TOOL=VALUE, like --role pay_supplier=manager"),
        (("--amount", "pay=total:cents"), "ARGUMENT[:major|minor]"),
        (("--preview", "pay=diff:x"), "dry-run:ARGUMENT"),
        (("--target", "pay=a,,b"), "separated by commas"),
    ],
)
def test_a_malformed_option_says_what_to_type(options: tuple[str, ...], says: str) -> None:
    """Each shape the engine cannot take is refused with the form to type instead."""
    with pytest.raises(CliError, match=says.replace("[", r"\[").replace("|", r"\|")):
        rules("ledger", _parsed(*options))


def test_a_pair_without_equals_is_refused() -> None:
    """--header and --env take NAME=VALUE; a value may itself hold '='."""
    assert pairs("--env", ["A=b=c"], "A=$A") == {"A": "b=c"}
    with pytest.raises(CliError, match="needs NAME=VALUE"):
        pairs("--header", ["Authorization"], "'Authorization=$TOKEN'")


def test_only_written_out_secrets_are_warned_about_and_never_repeated() -> None:
    """A $VAR is never warned about; a credential-named or Bearer value is, without its value."""
    warned = secret_warnings(
        "header",
        "shop",
        {
            "Authorization": "$SHOP_TOKEN",
            "X-Edge-Auth": "Bearer ${EDGE_TOKEN}",
            "Accept": "application/json",
            "X-Up": "Bearer abc",
        },
    )
    assert len(warned) == 1
    assert "--header 'X-Up=$SHOP_X_UP'" in warned[0]
    assert "abc" not in warned[0]
    assert secret_warnings("env", "ledger", {"NODE_ENV": "production"}) == []
    assert len(secret_warnings("env", "ledger", {"GITHUB_TOKEN": "ghp_x"})) == 1
