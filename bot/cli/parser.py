"""Describes the command line: every command, argument and help text; never runs anything."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from bot.cli.mcp_arguments import (
    CommandAfterDashes,
    review_arguments,
    set_arguments,
    source_arguments,
    store_secret,
    tool_rules,
)

__all__ = ["CONNECTABLE", "PLATFORMS", "build_parser"]

PLATFORMS = ("slack", "teams", "sandbox")
CONNECTABLE = ("slack", "teams")
_MAX_WORKERS = 64  # as the COUNTERSIGN_WORKERS setting allows

_DESCRIPTION = """\
Countersign: a chat agent for merchants that reads business data freely and changes it
only when a person approves a signed card.

Configuration comes from the environment (or a .env file in the current directory):
DATABASE_URL, SLACK_BOT_TOKEN, COUNTERSIGN_SECRET, LOG_LEVEL and the others in the README.
"""

_EPILOG = """\
try it locally, no Slack needed:
  countersign sandbox

a first run against Slack:
  countersign demo
  countersign connect slack T0123ABCD "Fiesta Foods"
  countersign link slack T0123ABCD U0456EFGH arjun@fiesta.example
  countersign serve

connect a merchant's own MCP server (its reads are free, its writes become cards):
  countersign mcp add "Fiesta Foods" ledger --url https://ledger.example/mcp \\
      --header 'Authorization=$LEDGER_TOKEN'
  countersign mcp tools "Fiesta Foods"
"""


def _whole(highest: int) -> Callable[[str], int]:
    """An argument type: a whole number from 1 to ``highest``, or argparse's usage error."""

    def convert(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not 1 <= number <= highest:
            raise argparse.ArgumentTypeError(f"{number} is outside 1 to {highest}")
        return number

    return convert


_positive = _whole(10_000)


def build_parser() -> argparse.ArgumentParser:
    """The ``countersign`` parser; each command stores its name in ``args.command``."""
    parser = argparse.ArgumentParser(
        prog="countersign",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_db(commands)
    demo = commands.add_parser(
        "demo",
        help="create the tables and load the demo merchants (safe to run again)",
        description="Brings the database schema up to date, then loads the demo merchants "
        "Fiesta Foods and Harbor Books with their branches, people, requests and about 90 "
        "orders. Running it again changes nothing; --reset starts the demo afresh.",
    )
    demo.add_argument(
        "--reset",
        action="store_true",
        help="delete every card, conversation and change and load the demo again (only a "
        "database holding nothing but the demo merchants; the audit log is kept)",
    )
    _add_connect(commands)
    _add_policy(commands)
    _add_mcp(commands)
    _add_mcp_token(commands)
    zone = commands.add_parser(
        "time-zone",
        help="show or set a merchant's time zone (whose days today and this week are)",
        description="Shows the merchant's time zone, or sets it to an IANA zone such as "
        "Asia/Kolkata: today, this week and a sales day start at midnight there.",
    )
    zone.add_argument("merchant", help="the merchant's name (or its id)")
    zone.add_argument("zone", nargs="?", help="an IANA time zone, e.g. Asia/Kolkata")
    _add_link(commands)
    _add_audit(commands)
    _add_serve(commands)
    commands.add_parser(
        "sandbox",
        help="try it locally: the bot and a Slack-like page in the browser (no Slack needed)",
        description="Migrates the database, loads the demo merchants if it is empty, and runs "
        "the bot against a local Slack sandbox: a web page on 127.0.0.1 (PORT, default 3000, "
        "or the next free port) where you act as any demo person. The bot serves its real "
        "/slack/events endpoint on another loopback port. Prints the page's URL; Ctrl-C stops "
        "both. COUNTERSIGN_HOST shares the page beyond this machine; only do that on purpose.",
    )
    commands.add_parser(
        "run",
        help="what `make run` does: the local sandbox, or Slack when credentials are set",
        description="With no Slack credentials: `countersign sandbox`. With them: loads the "
        "demo merchants into an empty database and serves Slack like `countersign serve`.",
    )
    commands.add_parser(
        "reconcile",
        help="settle approval cards left half-way by a stopped process",
        description="Finds cards a stopped process left 'executing' and records what became "
        "of them: 'interrupted' (nothing was changed) or 'outcome unknown' for tools with "
        "effects outside the database. Never runs a change again. The bot does this at "
        "start-up too.",
    )
    return parser


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help="start the bot (Slack over HTTP, Socket Mode or OAuth, or the local sandbox)",
        description="Starts the bot and runs until interrupted (Ctrl-C). Which Slack mode it "
        "uses follows from the settings: SLACK_CLIENT_ID (OAuth), SLACK_APP_TOKEN (Socket "
        "Mode), SLACK_BOT_TOKEN (one workspace over HTTP) or none of them (local sandbox).",
    )
    serve.add_argument(
        "--workers",
        type=_whole(_MAX_WORKERS),
        default=None,
        help="worker processes sharing the port, one per core is usual "
        "(default: COUNTERSIGN_WORKERS, else 1)",
    )
    # How a worker started by `--workers` gets its parent's listening socket; not for people.
    serve.add_argument("--listen-fd", type=int, default=None, help=argparse.SUPPRESS)


def _add_db(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = commands.add_parser(
        "db",
        help="manage the database schema",
        description="Manage the database schema at DATABASE_URL.",
    )
    actions = db.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    actions.add_parser(
        "upgrade",
        help="apply every pending migration",
        description="Applies every pending migration to the database at DATABASE_URL. "
        "Safe to run on an up-to-date database.",
    )


def _add_connect(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    connect = commands.add_parser(
        "connect",
        help="connect a Slack workspace or a Teams tenant to a merchant",
        description="Connects a chat installation to a merchant: only people of connected "
        "installations can reach that merchant's data. Step one of installing.",
    )
    _installation_arguments(connect)
    connect.add_argument("merchant", help="the merchant's name (or its id)")
    disconnect = commands.add_parser(
        "disconnect",
        help="disconnect an installation from its merchant",
        description="Disconnects a chat installation: nobody there reaches the merchant's "
        "data until it is connected again. Linked people stay linked for that day.",
    )
    _installation_arguments(disconnect)
    commands.add_parser(
        "connections",
        help="list the connected installations",
        description="Lists every connected Slack workspace and Teams tenant by merchant.",
    )
    invite = commands.add_parser(
        "invite",
        help="print a one-time install link that connects a workspace to a merchant",
        description="Prints a Slack install link carrying a one-time code: the workspace "
        "installed through it is connected to this merchant. Valid for 7 days.",
    )
    invite.add_argument("merchant", help="the merchant's name (or its id)")


def _add_policy(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    policy = commands.add_parser(
        "policy",
        help="show or change a merchant's approval policy",
        description="Who may approve a merchant's changes, and from which amount two "
        "different people must.",
    )
    actions = policy.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="show the policy", description="Shows the policy.")
    show.add_argument("merchant", help="the merchant's name (or its id)")
    change = actions.add_parser(
        "set",
        help="change the policy",
        description="Changes the given parts of the policy; the rest stays. Cards already "
        "issued keep the approvers they were issued to.",
    )
    change.add_argument("merchant", help="the merchant's name (or its id)")
    change.add_argument(
        "--approver-role",
        choices=("staff", "manager", "owner"),
        help="the least role that may approve any change (a tool needing more keeps its own)",
    )
    change.add_argument(
        "--two-approvers-from",
        metavar="AMOUNT",
        help="from this amount in the merchant's currency two different people must approve; "
        "off for never",
    )
    change.add_argument(
        "--escalate-after",
        type=_seconds,
        metavar="SECONDS",
        help="tell the owners about a routed card left undecided this long (at least 60)",
    )
    change.add_argument(
        "--two-approvers-window",
        type=_window,
        metavar="DURATION",
        help="count what the same order or branch already moved this far back toward the "
        "two-approver amount: 24h, 90m, 7d, or off (only the card's own amount)",
    )
    change.add_argument(
        "--self-approval",
        choices=("never", "not-own-requests", "allowed"),
        help="not-own-requests (the default): nobody approves a request they raised while "
        "someone else could; never: nor any card they asked for; allowed: the asker's role is "
        "enough",
    )


# The longest a token may be made for: ten years, beyond which "never" says it better.
_MAX_TOKEN_DAYS = 3650


def _token_name(text: str) -> str:
    name = " ".join(text.split())
    if not 1 <= len(name) <= 100:
        raise argparse.ArgumentTypeError("a token's name is 1 to 100 characters")
    return name


def _add_mcp_token(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = commands.add_parser(
        "mcp-token",
        help="create, list or revoke the personal tokens agents send to /mcp",
        description="A token means one person at one merchant: an agent sending it to /mcp "
        "(Authorization: Bearer <token>) sees what that person's role sees, and each change it "
        "asks for waits for approval like any other. Only the token's hash is stored.",
    )
    actions = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        help="create a token for a person; it is printed once, on the last line",
        description="Creates a token for the person with this email at this merchant and "
        "prints it once, alone on the last line of output. It cannot be shown again.",
    )
    create.add_argument("merchant", help="the merchant's name (or its id)")
    create.add_argument("email", help="the email of the person the token means")
    create.add_argument(
        "--name",
        type=_token_name,
        default="MCP token",
        help="what the token is for, shown on each card its agent asks for "
        '(e.g. "Claude Desktop on Arjun\'s laptop"; default: MCP token)',
    )
    create.add_argument(
        "--expires",
        type=_whole(_MAX_TOKEN_DAYS),
        metavar="DAYS",
        help="the token stops working after this many days (default: never; revoke it instead)",
    )
    listing = actions.add_parser(
        "list",
        help="list a merchant's tokens (never the tokens themselves)",
        description="Lists the merchant's tokens, newest first: id, first characters, person, "
        "name, state, when created, expiring, last used and revoked. Times are UTC.",
    )
    listing.add_argument("merchant", help="the merchant's name (or its id)")
    revoke = actions.add_parser(
        "revoke",
        help="revoke a token: an agent sending it is refused from then on",
        description="Revokes one of the merchant's tokens, named by the id or the first "
        "characters (cs_mcp_…) the list shows.",
    )
    revoke.add_argument("merchant", help="the merchant's name (or its id)")
    revoke.add_argument("token", metavar="id-or-prefix", help="the token's id or its prefix")


def _seconds(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if not 60 <= number <= 7 * 24 * 3600:
        raise argparse.ArgumentTypeError(f"{number} is outside 60 to 604800 seconds")
    return number


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 24 * 3600}


def _window(text: str) -> int:
    """A duration such as 24h, 90m, 7d or 3600s (seconds without a unit); off is 0."""
    given = text.strip().lower()
    if given in {"off", "none", "0"}:
        return 0
    unit = given[-1:] if given[-1:] in _UNITS else "s"
    number = given[:-1] if given[-1:] in _UNITS else given
    if not number.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 24h, 90m or 7d")
    seconds = int(number) * _UNITS[unit]
    if not 60 <= seconds <= 31 * 24 * 3600:
        raise argparse.ArgumentTypeError(f"{text} is outside a minute to 31 days (or off)")
    return seconds


def _installation_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("platform", choices=CONNECTABLE, help="the chat platform")
    parser.add_argument(
        "installation",
        metavar="installation-id",
        help="the Slack team id (T…) or enterprise id (E…), or the Teams (Entra) tenant id",
    )


def _add_link(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    link = commands.add_parser(
        "link",
        help="link a chat account to a person (by email)",
        description="Links a chat account to the person with this email, so the bot knows "
        "who is asking and in which merchant. Linking again is harmless.",
    )
    link.add_argument("platform", choices=PLATFORMS, help="the chat platform")
    link.add_argument(
        "installation",
        metavar="installation-id",
        help="where the app is installed: the Slack team id (T…) or enterprise id (E…), "
        "or the Teams tenant id",
    )
    link.add_argument(
        "user",
        metavar="platform-user-id",
        help="the person's id on the platform (Slack: U…; Teams: the AAD object id)",
    )
    link.add_argument("email", help="the email the person is set up with in Countersign")


def _add_audit(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    audit = commands.add_parser(
        "audit",
        help="show the audit log, newest first",
        description="Shows the audit log, newest first: every read, proposal, refusal, "
        "decision and outcome, with who asked, in which merchant and what came of it. "
        "Times are UTC.",
    )
    audit.add_argument(
        "--tenant", metavar="ID_OR_NAME", help="only this merchant (its id, or its name)"
    )
    audit.add_argument(
        "--limit",
        type=_positive,
        default=50,
        metavar="N",
        help="show at most N entries (default 50)",
    )
    audit.add_argument(
        "--card",
        metavar="CARD_ID",
        help="only entries about this approval card (the full id, or the short id shown)",
    )
    audit.add_argument(
        "--feedback",
        action="store_true",
        help="only the thumbs up and down people gave the assistant's answers: who, in which "
        "conversation, on which answer",
    )


_MERCHANT_HELP = "the merchant's name (or its id)"


def _add_mcp(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="connect a merchant's own MCP servers: reads are free, writes become cards",
        description="A merchant's own systems behind the card: the tools of its MCP servers "
        "are offered to that merchant's turns only. A tool is a read when you say so (--read) "
        "or you trust the server's annotations and it says readOnlyHint; every other tool is a "
        "write, which runs only when a person approves its card.",
    )
    actions = mcp.add_subparsers(
        dest="mcp_command", metavar="ACTION", required=True, parser_class=CommandAfterDashes
    )
    add = actions.add_parser(
        "add",
        command_after_dashes=True,
        help="connect a server (streamable HTTP or stdio), or replace one of that name",
        usage="%(prog)s merchant name (--url URL [--header NAME=VALUE]... | "
        "[--env NAME=VALUE]... -- COMMAND [ARGS...]) [options]",
        description="Stores the server and lists its tools once. A name already there is\n"
        "replaced. HTTP: --url URL. Stdio: the command that starts it goes last, after --.\n"
        "A header or env value written $VAR (in single quotes) is read from the environment\n"
        "when connecting, never stored.",
        epilog="examples:\n"
        '  countersign mcp add "Fiesta Foods" ledger --url https://ledger.example/mcp '
        "--header 'Authorization=$LEDGER_TOKEN'\n"
        '  countersign mcp add "Fiesta Foods" files --trust-annotations '
        "--preview edit_file=dry-run:dryRun -- npx -y @modelcontextprotocol/server-filesystem "
        "/srv/shop",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source_arguments(add)
    tool_rules(add)
    show = actions.add_parser(
        "tools",
        help="each tool as the model sees it: read or write, and why",
        description="Connects to each server of the merchant and prints one line per tool: "
        "the name the model sees, read or write, and why. Exit status 1 when a server could "
        "not be listed (its line says why; the others are still listed).",
    )
    show.add_argument("merchant", help=_MERCHANT_HELP)
    review = actions.add_parser(
        "review",
        help="accept the tools a server listed since it was connected or last reviewed",
        description="A tool a server lists beyond those it listed when connected (or last "
        "reviewed), or a write it now marks readOnlyHint, is a write until you review it. "
        "Without --read or --write, every such tool is accepted as the server marks it; with "
        "them, only the tools named, as you say.",
    )
    review_arguments(review)
    change = actions.add_parser(
        "set",
        help="change a connected server's card sentences, keeping everything else",
        description="Changes the sentence a tool's card reads first, keeping the server's "
        "other settings and the tools you accepted. Each {ARG} is the value of the argument "
        "of that name; the one --amount names reads as money. TOOL= (nothing after =) goes "
        "back to the tool's title. A card already waiting keeps its words.",
        epilog="example:\n"
        '  countersign mcp set "Fiesta Foods" ledger --sentence '
        "'record_payment=Pay {amount} to {supplier_id}, reference {reference}'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    set_arguments(change)
    listing = actions.add_parser(
        "list",
        help="each server: where it is, trust and rules (never a header's value)",
        description="Lists the merchant's servers as stored: transport and where, whether its "
        "annotations are trusted, headers and env as NAME=$VAR or NAME=(set), and the rules.",
    )
    listing.add_argument("merchant", help=_MERCHANT_HELP)
    remove = actions.add_parser(
        "remove", help="disconnect a server", description="Removes one server of a merchant."
    )
    remove.add_argument("merchant", help=_MERCHANT_HELP)
    remove.add_argument("name", help="the server's name, as mcp list shows it")
    imported = actions.add_parser(
        "import",
        help="add the servers of a Claude Desktop, Cursor or VS Code JSON file",
        description='Reads "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code) and '
        "adds each server, untrusted and without rules (add it again with mcp add to set "
        "them). Names are made lower-case with - for _. Nothing is started or connected: "
        "check them with mcp list; mcp tools then connects them.",
    )
    imported.add_argument("merchant", help=_MERCHANT_HELP)
    imported.add_argument("file", help="the JSON file, e.g. claude_desktop_config.json")
    store_secret(imported)
