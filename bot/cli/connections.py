"""Connects chat installations to merchants, lists them and hands out install codes.

These commands are how a workspace or a Teams tenant comes to belong to a merchant; nothing the
chat platforms send can do it. Each prints one short confirmation a person can read back.
"""

from __future__ import annotations

import argparse

from bot.cli.failures import checked_url
from bot.cli.lookup import find_tenant, tenant_names
from bot.cli.session import open_database
from bot.settings import Settings
from tools import Connection, Connections, Platform

__all__ = ["connect", "disconnect", "invite", "list_connections"]

_HEADERS = ("merchant", "platform", "installation", "connected (UTC)")


async def connect(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign connect slack|teams <installation> <merchant>``."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        made = await Connections(db).connect(Platform(args.platform), args.installation, tenant.id)
    return (
        f"Connected the {made.described} to {tenant.name}. Its people are linked by their "
        "verified email on their first message, or with countersign link."
    )


async def disconnect(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign disconnect slack|teams <installation>``."""
    async with open_database(checked_url(settings.database_url)) as db:
        gone = await Connections(db).disconnect(Platform(args.platform), args.installation)
        merchant = (await tenant_names(db, [gone.tenantid])).get(gone.tenantid, "?")
    return (
        f"Disconnected the {gone.described} from {merchant}. Nobody there reaches "
        f"{merchant}'s data until it is connected again."
    )


async def list_connections(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign connections``: every connected installation as a table."""
    async with open_database(checked_url(settings.database_url)) as db:
        found = await Connections(db).listing()
        merchants = await tenant_names(db, (c.tenantid for c in found))
    if not found:
        return (
            "No installations are connected yet. Connect one with: "
            'countersign connect slack <team-or-enterprise-id> "<merchant>"'
        )
    return _table([_row(c, merchants) for c in found])


def _row(connection: Connection, merchants: dict[int, str]) -> tuple[str, ...]:
    return (
        merchants.get(connection.tenantid, f"#{connection.tenantid}"),
        str(connection.platform),
        connection.installation,
        f"{connection.connected_at:%Y-%m-%d %H:%M}",
    )


def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(_HEADERS, *rows, strict=False)]
    lines = [_HEADERS, *rows]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in lines)


async def invite(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign invite <merchant>``: a one-time code that connects the next install."""
    async with open_database(checked_url(settings.database_url)) as db:
        tenant = await find_tenant(db, args.merchant)
        code = await Connections(db).invite(tenant.id)
    return (
        f"Install link for {tenant.name} (works once, for 7 days):\n"
        f"  https://<your host>/slack/install?invite={code}\n"
        "Whoever installs the app through it connects their workspace to "
        f"{tenant.name}. Keep it private."
    )
