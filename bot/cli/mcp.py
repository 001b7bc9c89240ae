"""``countersign mcp``: a merchant's own MCP servers, added, listed, reviewed, changed, imported
and removed.

What is stored is where a server is and what its owner said about its tools; a header or
variable written ``$VAR`` stays ``$VAR`` and is read only when connecting, and a secret written
out is refused, or stored encrypted with ``--store-secret`` (``bot.cli.mcp_secrets``). Nothing
here runs a tool: listing a server's tools is the only request these commands send it, and
``import`` sends none (it starts no command a file names before the owner has seen it).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.cli.failures import CliError, checked_url
from bot.cli.lookup import find_tenant
from bot.cli.mcp_import import Imported, read_servers
from bot.cli.mcp_listing import Listing, lines, listings, on_source
from bot.cli.mcp_options import pairs, rules, written_as_variables
from bot.cli.mcp_review import review_source
from bot.cli.mcp_secrets import (
    kept_import,
    refused_lines,
    sealed,
    secrets_box,
    stored_lines,
    written_secrets,
)
from bot.cli.mcp_sentences import check_sentences, set_source
from bot.cli.session import open_database
from bot.settings import Settings
from tools.toolsets.mcp import Sealed, SourceConfig, Sources, ToolRule

__all__ = [
    "COMMANDS",
    "add_source",
    "import_sources",
    "list_sources",
    "list_tools",
    "remove_source",
    "review_source",
    "set_source",
]

_WHERE_HELP = (
    "Say where the server is: --url https://HOST/mcp for streamable HTTP, or, last, "
    '-- COMMAND [ARGS…] for stdio (e.g. countersign mcp add "Fiesta Foods" ledger -- '
    "python ledger_server.py)."
)


async def add_source(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp add <merchant> <name> (--url URL | -- COMMAND [ARGS…]) [options]``."""
    config = _config(_fields(args))
    written = written_secrets(config)
    if written and not args.store_secret:
        raise CliError(
            f"Nothing was stored: a secret of {config.name} is written out; the lines above "
            "say how to give it as ${VAR}, or add --store-secret to store it encrypted.",
            output="\n".join(refused_lines(config.name, written, command="mcp add")),
        )
    box = secrets_box(settings, store=bool(written))
    warnings = stored_lines(config.name, written) if written else []
    if box is not None and written:
        config = sealed(config, written, box)
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        # Before storing: a sentence refused leaves the server as it was (or absent).
        warnings += await check_sentences(db, tenant.id, config, secrets=box)
        sources = Sources(db)
        new = await sources.put(tenant.id, config)
        listing = await listings(
            db, tenant.id, [await sources.source(tenant.id, config.name)], secrets=box
        )
    where = f"{config.transport}: {config.where}"
    if new:
        head = f"Added the {config.name} server ({where}) to {tenant.name}."
    else:
        head = (
            f"Replaced the {config.name} server of {tenant.name} with this one ({where}); "
            "its earlier settings and rules are gone."
        )
    return "\n".join(
        [head, *warnings, *_after_listing(listing[0], tenant.name), "", *lines(listing)]
    )


async def list_tools(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp tools <merchant>``: each tool, read or write, and why."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        found = await listings(
            db, tenant.id, await Sources(db).sources(tenant.id), secrets=secrets_box(settings)
        )
    if not found:
        return _none_yet(tenant.name)
    table = "\n".join(lines(found))
    failed = [config.name for config, listed in found if isinstance(listed, str)]
    if failed:
        raise CliError(
            f"{len(failed)} of {len(found)} MCP servers of {tenant.name} could not be listed "
            f"({', '.join(failed)}); the lines above say why. Their tools are left out of "
            "turns until they answer.",
            output=table,
        )
    return table


async def list_sources(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp list <merchant>``: each server, where it is, trust and rules."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        configs = await Sources(db).all(tenant.id)
    if not configs:
        return _none_yet(tenant.name)
    return "\n".join(line for config in configs for line in _described(config))


async def remove_source(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp remove <merchant> <name>``."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        sources = Sources(db)
        await on_source(sources, (tenant.id, tenant.name), args.name, sources.remove)
    return (
        f"Removed the {args.name} server from {tenant.name}: its tools are no longer offered "
        f"to the turns of {tenant.name}."
    )


async def import_sources(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp import <merchant> FILE``: the servers of a Claude Desktop, Cursor or
    VS Code file, stored and never started here.

    Importing never lists a server's tools: that would run every command the file names
    before the owner has seen what it is. ``mcp tools`` connects them, after ``mcp list``;
    the tools each lists then are the ones the owner connected.
    """
    servers = read_servers(Path(args.file))
    made = [(server, _imported(server)) for server in servers]
    secret = any(isinstance(c, SourceConfig) and written_secrets(c) for _, c in made)
    box = secrets_box(settings, store=secret and args.store_secret)
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        said = [line for server, _ in made for line in _notes(server)]
        stored = 0
        for server, made_config in made:
            config, notes = kept_import(server, made_config, box)
            if config is None:
                said.extend(notes)
                continue
            new = await Sources(db).put(tenant.id, config)
            said.append(_imported_line(server, config, tenant.name, new=new))
            said.extend(notes)
            stored += 1
    if not stored:
        raise CliError(f"Nothing was imported from {args.file}: " + "; ".join(said))
    return "\n".join([*said, "", _not_started(tenant.name)])


COMMANDS = {
    "add": add_source,
    "tools": list_tools,
    "review": review_source,
    "set": set_source,
    "list": list_sources,
    "remove": remove_source,
    "import": import_sources,
}


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    command: list[str] = list(args.server_command or [])
    if args.url is None and not command:
        raise CliError(_WHERE_HELP)
    if args.url is not None and command:
        raise CliError("Give either --url URL or -- COMMAND [ARGS…], not both.")
    fields: dict[str, Any] = {
        "name": args.name,
        "url": args.url,
        "headers": pairs("--header", args.header, "'Authorization=$LEDGER_TOKEN'"),
        "command": command[0] if command else None,
        "args": command[1:],
        "env": pairs("--env", args.env, "'LEDGER_TOKEN=$LEDGER_TOKEN'"),
        "trust_annotations": args.trust_annotations,
        "rules": rules(args.name, args),
    }
    if args.timeout is not None:
        fields["timeout"] = args.timeout
    return fields


def _config(fields: dict[str, Any]) -> SourceConfig:
    """The engine's ``SourceConfig``, or a ``CliError`` with each problem and what to type."""
    try:
        return SourceConfig.model_validate(fields)
    except ValidationError as bad:
        raise CliError(" ".join(_problem(error) for error in bad.errors())) from None


def _problem(error: Any) -> str:
    where = [str(part) for part in error["loc"]]
    text = str(error["msg"]).removeprefix("Value error, ")
    if where[:1] == ["rules"] and len(where) >= 2:
        return f"The rule for {where[1]}: {'.'.join(where[2:]) or 'value'}: {text}."
    if where == ["timeout"]:
        return f"--timeout: {text} (seconds, up to 600)."
    if where == [] and "URL" in text:
        return f"{text[:1].upper()}{text[1:]}: write it like --url https://ledger.example/mcp."
    if where in (["name"], []):
        return f"{text[:1].upper()}{text[1:]}."
    return f"{'.'.join(where)}: {text}."


def _after_listing(listing: Listing, merchant: str) -> list[str]:
    """Warnings once a just-added server was asked for its tools."""
    config, found = listing
    if isinstance(found, str):
        return [
            f"Warning: stored, but the {config.name} server could not be listed just now: "
            f"{found} Its tools are offered once it answers; check with "
            f'countersign mcp tools "{merchant}".'
        ]
    offered = {listed.name for listed in found}
    named = set(config.rules) | {
        rule.preview.name
        for rule in config.rules.values()
        if rule.preview is not None and rule.preview.kind == "tool"
    }
    unknown = sorted(named - offered)
    if not unknown:
        return []
    return [
        f"Warning: the rules name {', '.join(unknown)}, which the {config.name} server does not "
        f"list (it lists {', '.join(sorted(offered)) or 'nothing'}). They are kept and apply if "
        "it ever does; check the spelling."
    ]


def _described(config: SourceConfig) -> list[str]:
    trust = (
        "trusted: a tool marked readOnlyHint is a read"
        if config.trust_annotations
        else "not trusted: every tool is a write unless --read says otherwise"
    )
    lines = [
        f"{config.name}  {config.transport}  {config.where}",
        f"  annotations  {trust}",
        f"  timeout      {config.timeout:g} s",
    ]
    if config.headers:
        lines.append(f"  headers      {_hidden(config.headers)}")
    if config.env:
        lines.append(f"  env          {_hidden(config.env)}")
    for tool, rule in sorted(config.rules.items()):
        lines.append(f"  rule         {tool}: {_rule_words(rule)}")
    return lines


def _hidden(values: dict[str, str | Sealed]) -> str:
    """Names with their ``$VAR`` (or ``Bearer ${VAR}``), else ``(set)``: a value written out
    may be a secret."""
    return ", ".join(f"{name}={_shown_value(value)}" for name, value in values.items())


def _shown_value(value: str | Sealed) -> str:
    if isinstance(value, Sealed):
        return "(stored encrypted)"
    return value if written_as_variables(value) else "(set)"


def _rule_words(rule: ToolRule) -> str:
    parts: list[str] = []
    if rule.scope is not None:
        parts.append(f"--{rule.scope}")
    if rule.role is not None:
        parts.append(f"role {rule.role}")
    if rule.amount is not None:
        parts.append(f"amount {rule.amount} ({rule.unit})")
    if rule.targets:
        parts.append(f"target {','.join(rule.targets)}")
    if rule.editable:
        parts.append(f"editable {','.join(rule.editable)}")
    if rule.preview is not None:
        kind = "dry-run" if rule.preview.kind == "dry_run" else "tool"
        parts.append(f"preview {kind}:{rule.preview.name}")
    if rule.sentence is not None:
        parts.append(f"sentence “{rule.sentence}”")
    return ", ".join(parts) or "defaults"


def _none_yet(merchant: str) -> str:
    return (
        f'{merchant} has no MCP servers yet. Add one with: countersign mcp add "{merchant}" '
        "NAME --url https://HOST/mcp (or -- COMMAND [ARGS…] for stdio)."
    )


def _imported(server: Imported) -> SourceConfig | str:
    """The server as a ``SourceConfig``, or why it was skipped."""
    if server.fields is None:
        return server.skipped or "it could not be read"
    try:
        return _config({"name": server.name, **server.fields})
    except CliError as bad:
        return str(bad)


def _notes(server: Imported) -> list[str]:
    return [f"Note: {note}." for note in server.notes]


def _not_started(merchant: str) -> str:
    return (
        "Nothing was started or connected. Check each server's command or URL with "
        f'countersign mcp list "{merchant}"; countersign mcp tools "{merchant}" then connects '
        "them and lists their tools."
    )


def _imported_line(server: Imported, config: SourceConfig, merchant: str, *, new: bool) -> str:
    how = "Imported" if new else "Imported, replacing the one of that name,"
    return f"{how} {config.name} ({config.transport}: {config.where}) into {merchant}."
