"""Loads the settings, runs one parsed command and maps its failures to exit codes.

Exit status: 0 on success, 2 on a usage error (argparse prints it), 1 on an expected failure
(a setting, the database, an unknown email...) with one line on stderr. Bugs keep their
traceback, so they can be reported.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from bot.cli.audit import show_audit
from bot.cli.commands import db_upgrade, demo, link, reconcile_cards, serve
from bot.cli.connections import connect, disconnect, invite, list_connections
from bot.cli.failures import CliError
from bot.cli.mcp_tokens import create_token, list_tokens, revoke_token
from bot.cli.policy import set_policy, show_policy, time_zone
from bot.cli.sandbox import run, sandbox
from bot.runtime.logging import LogLevelError, configure_logging, secrets_of
from bot.settings import Settings, SettingsError, load_settings
from tools.errors import CountersignError

__all__ = ["execute"]

Command = Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, str]]


async def _mcp(settings: Settings, args: argparse.Namespace) -> str:
    # The MCP SDK (and its HTTP client) takes a second to import on a busy machine; only
    # `countersign mcp` needs it, so no other command pays for it.
    from bot.cli.mcp import COMMANDS

    return await COMMANDS[args.mcp_command](settings, args)


_COMMANDS: dict[tuple[str, str | None], Command] = {
    ("db", "upgrade"): db_upgrade,
    ("demo", None): demo,
    ("connect", None): connect,
    ("disconnect", None): disconnect,
    ("connections", None): list_connections,
    ("invite", None): invite,
    ("policy", "show"): show_policy,
    ("policy", "set"): set_policy,
    **{
        ("mcp", action): _mcp
        for action in ("add", "tools", "review", "set", "list", "remove", "import")
    },
    ("mcp-token", "create"): create_token,
    ("mcp-token", "list"): list_tokens,
    ("mcp-token", "revoke"): revoke_token,
    ("time-zone", None): time_zone,
    ("link", None): link,
    ("audit", None): show_audit,
    ("serve", None): serve,
    ("reconcile", None): reconcile_cards,
    ("sandbox", None): sandbox,
    ("run", None): run,
}

# Ctrl-C's conventional exit status (128 + SIGINT).
_INTERRUPTED = 130


def execute(args: argparse.Namespace) -> int:
    """Runs the command ``args`` names and prints its answer.

    Returns:
        0 on success, 1 on an expected failure (one line on stderr), 130 on Ctrl-C.
    """
    action = (
        getattr(args, "db_command", None)
        or getattr(args, "policy_command", None)
        or getattr(args, "mcp_command", None)
        or getattr(args, "token_command", None)
    )
    command = _COMMANDS[(args.command, action)]
    try:
        settings = load_settings()
        configure_logging(settings.log_level, secrets=secrets_of(settings))
        output = asyncio.run(command(settings, args))
    except (SettingsError, LogLevelError, CliError, CountersignError) as failed:
        if isinstance(failed, CliError) and failed.output:
            print(failed.output)
        _complain(str(failed))
        return 1
    except KeyboardInterrupt:
        return _INTERRUPTED
    if output:
        print(output)
    return 0


def _complain(message: str) -> None:
    # One line: whatever reads stderr (a person, a process manager's log) sees it whole.
    print(f"countersign: {' '.join(message.split())}", file=sys.stderr)
