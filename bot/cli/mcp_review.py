"""``countersign mcp review``: the owner accepts the tools a server listed since it was
connected or last reviewed; it never runs a tool.

Until then such a tool is a write, whatever the server says of it (``tools.toolsets.mcp``): a trusted
server that added a tool marked read-only, or marked a write read-only, would otherwise have it
run at the model's word before the owner ever saw it.
"""

from __future__ import annotations

import argparse

from bot.cli.failures import CliError, checked_url
from bot.cli.lookup import find_tenant
from bot.cli.mcp_listing import lines, on_source
from bot.cli.mcp_options import scopes
from bot.cli.mcp_secrets import secrets_box
from bot.cli.session import open_database
from bot.settings import Settings
from tools import Scope
from tools.errors import NotFoundError
from tools.toolsets.mcp import McpTools, Reviewed, SourceClients, Sources

__all__ = ["review_source"]


async def review_source(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp review <merchant> <name> [--read TOOL]... [--write TOOL]...``."""
    named = {tool: Scope(scope) for tool, scope in scopes(args.name, args).items()}
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        sources = Sources(db)
        source = await on_source(sources, (tenant.id, tenant.name), args.name, sources.source)
        mcp = McpTools(db, SourceClients(secrets=secrets_box(settings)))
        try:
            reviewed = await mcp.review(tenant.id, source, named)
        except NotFoundError as failed:
            raise CliError(str(failed)) from None
        finally:
            await mcp.aclose()
    table = lines([(source.config, reviewed.listed)])
    return "\n".join([_head(args.name, tenant.name, reviewed), "", *table])


def _head(source: str, merchant: str, reviewed: Reviewed) -> str:
    if not reviewed.accepted:
        return (
            f"Reviewed the {source} server of {merchant}: nothing new since it was last reviewed."
        )
    each = ", ".join(f"{tool} ({_marked(said)})" for tool, said in reviewed.accepted.items())
    return f"Reviewed the {source} server of {merchant}: accepted {each}."


def _marked(said: Scope) -> str:
    return (
        "the server marks it readOnlyHint" if said is Scope.READ else "the server marks it a write"
    )
