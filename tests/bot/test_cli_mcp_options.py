"""What `countersign mcp add` makes of its per-tool options, before anything is stored."""

from __future__ import annotations

import argparse

import pytest

from bot.cli.failures import CliError
from bot.cli.mcp_options import pairs, rules
from bot.cli.mcp_secrets import refused_lines, written_secrets
from bot.cli.parser import build_parser
from tools.toolsets.mcp import SourceConfig


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


def test_every_literal_header_and_credential_looking_env_is_a_written_secret() -> None:
    """A $VAR is never refused; every literal header is (a header is how a server is told who
    calls it), an env value only when it looks like a credential; the value is never repeated."""
    config = SourceConfig(
        name="shop",
        url="http://127.0.0.1:9/mcp",
        headers={
            "Authorization": "$SHOP_TOKEN",
            "X-Edge-Auth": "Bearer ${EDGE_TOKEN}",
            "Accept": "application/json",
            "X-Up": "Bearer abc",
        },
    )
    written = written_secrets(config)
    assert [w.option for w in written] == [
        "--header 'Accept=${SHOP_ACCEPT}'",
        "--header 'X-Up=Bearer ${SHOP_X_UP}'",
    ]
    lines = "\n".join(refused_lines("shop", written, command="mcp add"))
    assert "export SHOP_X_UP='…'   (the header X-Up's value, after 'Bearer')" in lines
    assert "abc" not in lines
    assert "application/json" not in lines

    def stdio(env: dict[str, str]) -> SourceConfig:
        return SourceConfig(name="ledger", command="ledger", env=env)

    assert written_secrets(stdio({"NODE_ENV": "production"})) == []
    assert len(written_secrets(stdio({"GITHUB_TOKEN": "ghp_x"}))) == 1
