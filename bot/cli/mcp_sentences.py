"""Checks the owner's card sentences against a server's tools, and ``countersign mcp set`` changes
them; never runs a tool.

A sentence's placeholders are the tool's argument names, which only the server's listing knows:
a sentence naming one it does not take is refused here, before anything is stored, so the owner
reads the name it did not know rather than a card that quietly falls back to the title.
"""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from bot.cli.failures import CliError, checked_url
from bot.cli.lookup import find_tenant
from bot.cli.mcp_listing import lines, listings, on_source
from bot.cli.mcp_options import sentences
from bot.cli.mcp_secrets import secrets_box
from bot.cli.session import open_database
from bot.settings import Settings
from tools.db import Database
from tools.errors import NotFoundError
from tools.toolsets.mcp import (
    McpTools,
    SecretBox,
    SourceClients,
    SourceConfig,
    Sources,
    ToolRule,
    sentence_problem,
)

__all__ = ["check_sentences", "set_source"]


async def check_sentences(
    db: Database,
    tenantid: int,
    config: SourceConfig,
    *,
    only: frozenset[str] | None = None,
    secrets: SecretBox | None = None,
) -> list[str]:
    """Warnings for sentences that could not be checked (the server did not answer, or does
    not list the tool); ``CliError`` naming a placeholder a listed tool does not take.

    ``only``: check these tools' sentences (those just given); every sentence by default.
    """
    named = [
        tool
        for tool, rule in config.rules.items()
        if rule.sentence is not None and (only is None or tool in only)
    ]
    if not named:
        return []
    mcp = McpTools(db, SourceClients(secrets=secrets))
    try:
        listed = {tool.name: tool for tool in await mcp.listing(tenantid, config)}
    except NotFoundError as failed:
        return [
            f"Warning: the sentences could not be checked, since the {config.name} server could "
            f"not be listed just now ({failed}). countersign mcp tools checks them once it "
            "answers; a card whose sentence names an argument its tool does not take reads the "
            "tool's title instead."
        ]
    finally:
        await mcp.aclose()
    problems = [
        p for tool in named if tool in listed and (p := sentence_problem(config, listed[tool]))
    ]
    if problems:
        raise CliError(
            f"{'; '.join(p[:1].upper() + p[1:] for p in problems)}. Nothing was stored: write "
            "each placeholder as one of those names, like {amount}, and try again."
        )
    return [
        f"Warning: the {config.name} server does not list {tool}, so its sentence could not be "
        "checked; it is kept and applies if it ever does."
        for tool in named
        if tool not in listed
    ]


async def set_source(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp set <merchant> <name> --sentence TOOL=TEXT…`` (``TOOL=``: none)."""
    given = sentences(args.name, args.sentence)
    if not given:
        raise CliError(
            "Say what to change, like --sentence 'record_payment=Pay {amount} to {supplier_id}' "
            "(or --sentence record_payment= for the tool's title)."
        )
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        sources = Sources(db)
        source = await on_source(sources, (tenant.id, tenant.name), args.name, sources.source)
        rules = _rules(given)
        changed = source.config.with_rules(rules)
        box = secrets_box(settings)
        warnings = await check_sentences(db, tenant.id, changed, only=frozenset(given), secrets=box)
        stored = await sources.change_rules(tenant.id, args.name, rules)
        listing = await listings(db, tenant.id, [stored], secrets=box)
    head = [_changed(args.name, tenant.name, tool, said) for tool, said in given.items()]
    return "\n".join([*head, *warnings, "", *lines(listing)])


def _rules(given: dict[str, str | None]) -> dict[str, ToolRule]:
    try:
        return {tool: ToolRule(sentence=said) for tool, said in given.items()}
    except ValidationError as bad:
        text = " ".join(str(e["msg"]).removeprefix("Value error, ") for e in bad.errors())
        raise CliError(f"--sentence: {text}. Nothing was changed.") from None


def _changed(source: str, merchant: str, tool: str, said: str | None) -> str:
    what = f"“{said}”" if said else "its title (no sentence)"
    return (
        f"The cards of {tool} on the {source} server of {merchant} now read {what}; a card "
        "already waiting keeps its words and is refused at Approve as changed since shown."
    )
