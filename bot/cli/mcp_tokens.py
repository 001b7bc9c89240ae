"""Creates, lists and revokes the personal tokens agents send to ``/mcp``, and agents connected by OAuth; never shows a token twice.

``create`` prints the token once, alone on its last line, so a script can take it with
``tail -n 1``; only its hash is stored, and no later command can show it again. Lists show a
token's first characters, never the token or its hash.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from bot.cli.failures import CliError, checked_url
from bot.cli.lookup import find_person, find_tenant, person_names
from bot.cli.session import open_database
from bot.settings import Settings
from tools import Grant, Grants, McpToken, McpTokens, time_stamp, utcnow
from tools.db import Database
from tools.errors import NotFoundError

__all__ = ["create_token", "list_tokens", "revoke_token"]

_HEADERS = (
    "id",
    "token",
    "person",
    "name",
    "state",
    "created (UTC)",
    "expires (UTC)",
    "last used (UTC)",
    "revoked (UTC)",
)
_GRANT_HEADERS = (
    "id",
    "person",
    "client",
    "state",
    "connected (UTC)",
    "last used (UTC)",
    "revoked (UTC)",
)
# Addresses a server listens on that no agent can send to.
_EVERYWHERE = {"0.0.0.0", "::", ""}  # noqa: S104 (recognised, never bound here)


async def create_token(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp-token create <merchant> <email> [--name NAME] [--expires DAYS]``."""
    expires = None if args.expires is None else timedelta(days=args.expires)
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        person = await find_person(db, tenant, args.email)
        try:
            text, token = await McpTokens(db).create(tenant.id, person.id, args.name, expires)
        except ValueError as bad:
            raise CliError(f"{bad}.") from None
    revoke = f'countersign mcp-token revoke "{tenant.name}" {token.id[:8]}'
    return "\n".join(
        [
            f"Created an MCP token for {person.name} ({person.email}), {person.role} at "
            f"{tenant.name}.",
            f"  name     {token.name}",
            f"  id       {token.id[:8]} ({token.shown})",
            f"  expires  {_expiry(token, tenant.time_zone)}",
            f"An agent sends it to {_mcp_url(settings)} in the header",
            "  Authorization: Bearer <the token>",
            f"It acts as {person.name} ({person.role}): it sees what their role may see, and "
            "every change it asks for waits for approval on a card in Slack or Teams.",
            f"Revoke it with: {revoke}",
            "This is the only time the token is shown; only its hash is kept. Keep it secret:",
            text,
        ]
    )


def _expiry(token: McpToken, zone: str) -> str:
    if token.expires_at is None:
        return "never (give --expires DAYS for a token that ends by itself)"
    days = round((token.expires_at - token.created_at) / timedelta(days=1))
    return f"{time_stamp(token.expires_at, zone)} (in {days} day{'' if days == 1 else 's'})"


def _mcp_url(settings: Settings) -> str:
    """Where ``countersign serve`` answers /mcp, as far as the settings tell."""
    host = settings.countersign_host.strip("[]")
    if host in _EVERYWHERE:
        return f"http://<this server's address>:{settings.port}/mcp"
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{settings.port}/mcp (or /mcp at its public address)"


async def list_tokens(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp-token list <merchant>``: every token of the merchant, newest first."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        tokens = await McpTokens(db).list(tenant.id)
        names = await person_names(db, (t.personid for t in tokens))
        grants = await Grants(db).list(tenant.id)
        names |= await person_names(db, (g.personid for g in grants))
    now = utcnow()
    shown = (
        _table(_HEADERS, [_row(t, names, now) for t in tokens])
        if tokens
        else (
            f"{tenant.name} has no MCP tokens yet. Create one with: "
            f'countersign mcp-token create "{tenant.name}" <email>'
        )
    )
    if not grants:
        return shown
    agents = _table(_GRANT_HEADERS, [_grant_row(g, names) for g in grants])
    return f"{shown}\n\nAgents connected by OAuth (each allowed by its person on a card):\n{agents}"


def _grant_row(grant: Grant, names: dict[int, str]) -> tuple[str, ...]:
    return (
        grant.id[:8],
        names.get(grant.personid, f"person {grant.personid}"),
        grant.client_name,
        "revoked" if grant.revoked_at else "active",
        _when(grant.created_at),
        _when(grant.last_used_at, none="never"),
        _when(grant.revoked_at),
    )


def _row(token: McpToken, names: dict[int, str], now: datetime) -> tuple[str, ...]:
    return (
        token.id[:8],
        token.shown,
        names.get(token.personid, f"person {token.personid}"),
        token.name,
        token.state(now),
        _when(token.created_at),
        _when(token.expires_at, none="never"),
        _when(token.last_used_at, none="never"),
        _when(token.revoked_at),
    )


def _when(at: datetime | None, *, none: str = "-") -> str:
    return none if at is None else f"{at:%Y-%m-%d %H:%M}"


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows, strict=False)]
    lines = [headers, *rows]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in lines
    )


async def revoke_token(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign mcp-token revoke <merchant> <id-or-prefix>``."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        try:
            token = await McpTokens(db).revoke(tenant.id, args.token)
        except NotFoundError:
            return await _disconnect(db, tenant.id, tenant.name, args.token)
        person = (await person_names(db, [token.personid])).get(token.personid, "?")
    assert token.revoked_at is not None
    return (
        f'Revoked the MCP token {token.id[:8]} ({token.shown}, "{token.name}") of {person} at '
        f"{tenant.name}, as of {time_stamp(token.revoked_at, tenant.time_zone)}. An agent sending "
        "it now is "
        "refused (401)."
    )


async def _disconnect(db: Database, tenantid: int, merchant: str, ref: str) -> str:
    """Revokes an agent connected by OAuth, named by the id the list shows."""
    grants = Grants(db)
    try:
        grant = await grants.named(tenantid, ref)
    except NotFoundError:
        raise CliError(
            f"{merchant} has no MCP token or connected agent {ref.strip()!r}. Both, with the ids "
            f'to give: countersign mcp-token list "{merchant}"'
        ) from None
    await grants.revoke(grant.id)
    person = (await person_names(db, [grant.personid])).get(grant.personid, "?")
    return (
        f"Disconnected {grant.client_name} ({grant.id[:8]}), connected as {person} at "
        f"{merchant}. Its tokens are refused (401) from now on."
    )
