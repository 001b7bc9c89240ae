"""Describes the options of ``countersign mcp add``, ``review`` and ``set``: where a server is and
its tools' rules.

Only describes; ``bot.cli.mcp_options`` reads what was given and ``bot.cli.mcp`` stores it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CommandAfterDashes",
    "review_arguments",
    "sentence",
    "set_arguments",
    "source_arguments",
    "store_secret",
    "tool_rules",
]


class CommandAfterDashes(argparse.ArgumentParser):
    """A parser whose arguments after the first ``--`` are a command line of their own.

    ``nargs=REMAINDER`` would also swallow the options written before ``--`` (argparse hands it
    everything from the first positional on), so the split is made here, before parsing.
    """

    def __init__(self, *args: Any, command_after_dashes: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._command_after_dashes = command_after_dashes

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        given = list(sys.argv[1:] if args is None else args)
        if not self._command_after_dashes:
            return super().parse_known_args(given, namespace)
        command: list[str] = []
        if "--" in given:
            at = given.index("--")
            given, command = given[:at], given[at + 1 :]
        parsed, extras = super().parse_known_args(given, namespace)
        parsed.server_command = command
        return parsed, extras


def source_arguments(add: argparse.ArgumentParser) -> None:
    add.add_argument("merchant", help="the merchant's name (or its id)")
    add.add_argument(
        "name", help="the server's name: lower-case letters, digits, hyphens (e.g. ledger)"
    )
    add.add_argument("--url", help="a streamable HTTP server's URL, e.g. https://host/mcp")
    add.add_argument(
        "--header",
        action="append",
        metavar="NAME=VALUE",
        help="an HTTP header sent with every request; write 'NAME=$VAR' for a secret",
    )
    add.add_argument(
        "--env",
        action="append",
        metavar="NAME=VALUE",
        help="an environment variable of a stdio server; write 'NAME=$VAR' for a secret",
    )
    add.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="how long one request may take (default 30, at most 600)",
    )
    store_secret(add)
    add.add_argument(
        "--trust-annotations",
        action="store_true",
        help="let the server's readOnlyHint make a tool a read (default: every tool is a write)",
    )


def store_secret(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--store-secret",
        action="store_true",
        help="store a header or env value written out encrypted with COUNTERSIGN_SECRETS_KEY "
        "(without it, a secret written out is refused with the $VAR way to give it)",
    )


def tool_rules(add: argparse.ArgumentParser) -> None:
    rules = add.add_argument_group("per tool (each may be given several times)")
    rules.add_argument("--read", action="append", metavar="TOOL", help="TOOL is a read")
    rules.add_argument(
        "--write", action="append", metavar="TOOL", help="TOOL is a write, whatever it says"
    )
    rules.add_argument(
        "--role",
        action="append",
        metavar="TOOL=ROLE",
        help="the least role that may approve it: staff, manager or owner",
    )
    rules.add_argument(
        "--amount",
        action="append",
        metavar="TOOL=ARG[:major|minor]",
        help="the argument that is its amount, for two approvers (major: 7800.50; minor: 780050)",
    )
    rules.add_argument(
        "--target",
        action="append",
        metavar="TOOL=ARG[,ARG…]",
        help="the arguments naming what it changes: one live card per target",
    )
    rules.add_argument(
        "--editable",
        action="append",
        metavar="TOOL=ARG[,ARG…]",
        help="the arguments an approver may change on the card (Edit)",
    )
    rules.add_argument(
        "--preview",
        action="append",
        metavar="TOOL=dry-run:ARG|tool:COMPANION",
        help="how the card shows what it would do: ARG set to true, or a companion read tool",
    )
    sentence(rules)


def sentence(group: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    group.add_argument(
        "--sentence",
        action="append",
        metavar="TOOL=TEXT",
        help="the card's first line, each {ARG} an argument's value, e.g. "
        "'record_payment=Pay {amount} to {supplier_id}' ({ARG} of --amount reads as money)",
    )


def set_arguments(change: argparse.ArgumentParser) -> None:
    change.add_argument("merchant", help="the merchant's name (or its id)")
    change.add_argument("name", help="the server's name, as mcp list shows it")
    group = change.add_argument_group("per tool (each may be given several times)")
    sentence(group)


def review_arguments(review: argparse.ArgumentParser) -> None:
    review.add_argument("merchant", help="the merchant's name (or its id)")
    review.add_argument("name", help="the server's name, as mcp list shows it")
    named = review.add_argument_group(
        "per tool (each may be given several times; without any, every new tool is accepted "
        "as the server marks it)"
    )
    named.add_argument("--read", action="append", metavar="TOOL", help="TOOL is a read; accept it")
    named.add_argument(
        "--write",
        action="append",
        metavar="TOOL",
        help="TOOL is a write, whatever it says; accept it",
    )
