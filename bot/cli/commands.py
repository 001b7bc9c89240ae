"""The commands that set up and run the bot: migrate, demo data, linking, serving, reconciling.

Each command takes the settings and the parsed arguments and returns the text to print. None of
them changes merchant data: ``demo`` only adds the demo merchants to an empty database (``demo
--reset`` starts a database holding only the demo merchants afresh), and ``reconcile`` only
records what became of cards a stopped process left half-way.
"""

from __future__ import annotations

import argparse
import errno
import socket
from datetime import timedelta
from pathlib import Path

from bot.cli.failures import CliError, checked_url, database_errors, shown_url
from bot.cli.lookup import person_names, tenant_names
from bot.cli.session import open_database, probe_database
from bot.settings import Settings, SettingsError
from tools import CardRecord, CardSigner, Directory, ProcessLease
from tools.toolsets.mcp import McpTools
from tools.toolsets.mcp.demo import connect_demo_ledger
from tools.toolsets.merchant import build_registry
from tools.toolsets.merchant.demo import FIESTA, load_demo
from tools.toolsets.merchant.demo_reset import reset_demo

__all__ = ["db_upgrade", "demo", "link", "reconcile_cards", "reset_demo_data", "serve"]


async def db_upgrade(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign db upgrade``: applies every pending migration."""
    # Alembic takes over a second to import; only this command (and demo) needs it.
    from alembic.util.exc import CommandError

    from tools.db.migrate import upgrade_async

    url = checked_url(settings.database_url)
    try:
        with database_errors(url):
            await upgrade_async(url.render_as_string(hide_password=False))
    except CommandError as failed:
        # e.g. the database was migrated by a newer Countersign than this one.
        raise CliError(f"Could not migrate the database {shown_url(url)}: {failed}") from failed
    return f"The database {shown_url(url)} is up to date."


async def demo(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign demo``: migrates, then loads the demo merchants unless they are there.

    With ``--reset``, a database holding only the demo merchants is started afresh first.
    """
    migrated = await db_upgrade(settings, args)
    if getattr(args, "reset", False):
        orders = await reset_demo_data(settings)
        # The sandbox's saved workspace holds the messages of the cards just deleted; a page
        # showing them would offer buttons on cards that no longer exist.
        from bot.sandbox.store import state_file

        saved = state_file(settings.database_url)
        if saved is not None:
            saved.unlink(missing_ok=True)
        return (
            f"{migrated}\nStarted the demo afresh: every card, conversation and change is gone, "
            f"and Fiesta Foods and Harbor Books are loaded again ({orders} orders), with the "
            "demo supplier ledger connected to Fiesta Foods. The audit log keeps what happened "
            "before, and the ledger keeps its own books."
        )
    url = checked_url(settings.database_url)
    ledger = _ledger_path(url.database if url.get_backend_name() == "sqlite" else None)
    async with open_database(url) as db:
        summary = await load_demo(db)
        connected = await connect_demo_ledger(db, FIESTA, ledger)
    said = (
        f"\nConnected the demo supplier ledger (an MCP server, {ledger.name}) to Fiesta Foods."
        if connected
        else ""
    )
    if not summary.loaded and summary.tour_requests:
        return (
            f"{migrated}\nDemo data already present; added the README tour's "
            f"{summary.tour_requests} requests of its own (11 to 15).{said}"
        )
    if not summary.loaded:
        return f"{migrated}\nDemo data already present; nothing was changed.{said}"
    return (
        f"{migrated}\nLoaded Fiesta Foods and Harbor Books ({summary.orders} orders).{said}\n"
        "Next, connect your Slack workspace (or Teams tenant) to a merchant, for example: "
        'countersign connect slack T0123ABCD "Fiesta Foods"'
    )


def _ledger_path(database: str | None) -> Path:
    """Where the demo ledger keeps its books: beside a SQLite database, else here."""
    if database and database != ":memory:":
        path = Path(database).resolve()
        return path.with_name(f"{path.stem}-ledger.db")
    return Path("countersign-ledger.db").resolve()


async def reset_demo_data(settings: Settings) -> int:
    """Deletes what the demo and its use made (never the audit) and loads it again, with the
    demo ledger connected to Fiesta Foods again; the orders loaded."""
    url = checked_url(settings.database_url)
    async with open_database(url) as db:
        orders = (await reset_demo(db)).orders
        ledger = _ledger_path(url.database if url.get_backend_name() == "sqlite" else None)
        await connect_demo_ledger(db, FIESTA, ledger)
    return orders


async def link(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign link``: links a chat identity to the person with that email."""
    async with open_database(checked_url(settings.database_url)) as db:
        caller = await Directory(db).link(args.platform, args.installation, args.user, args.email)
        merchant = (await tenant_names(db, [caller.tenantid])).get(caller.tenantid, "?")
    return (
        f"Linked {args.platform} {args.installation}/{args.user} to "
        f"{caller.name} ({caller.role}, {merchant})"
    )


async def reconcile_cards(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign reconcile``: settles cards left ``executing`` and lists them."""
    signer = CardSigner(
        settings.card_secrets(), ttl=timedelta(seconds=settings.countersign_card_ttl)
    )
    async with open_database(checked_url(settings.database_url)) as db:
        lease = ProcessLease(db, expiry=timedelta(seconds=settings.countersign_reconcile_after))
        registry = build_registry(db, signer, lease=lease)
        # Names a card's MCP tool as such (an external write: "outcome unknown", never
        # "nothing was changed"), without connecting to any server.
        registry.add_source(McpTools(db))
        settled = await registry.sweeps.reconcile()
        people = await person_names(db, (card.userid for card in settled))
        merchants = await tenant_names(db, (card.tenantid for card in settled))
    if not settled:
        return "No cards were left half-way; nothing needed settling."
    lines = [f"Settled {len(settled)} card(s) a stopped process left half-way:"]
    lines += [_settled_line(card, people, merchants) for card in settled]
    return "\n".join(lines)


def _settled_line(card: CardRecord, people: dict[int, str], merchants: dict[int, str]) -> str:
    who = people.get(card.userid, f"person {card.userid}")
    where = merchants.get(card.tenantid, f"merchant {card.tenantid}")
    return f"  card {card.card_id[:8]} ({card.tool}, {who}, {where}): {card.outcome}"


async def serve(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign serve``: checks the database, then serves every configured surface until stopped."""
    if not (settings.slack_enabled or settings.teams_enabled):
        raise SettingsError(settings.nothing_to_serve())
    await probe_database(checked_url(settings.database_url))
    # `countersign run` serves through here too, without `serve`'s options.
    workers = getattr(args, "workers", None) or settings.countersign_workers
    listen_fd: int | None = getattr(args, "listen_fd", None)
    try:
        if workers > 1 and listen_fd is None:
            await _serve_workers(settings, workers)
        else:
            await _serve_here(settings, listen_fd)
    except OSError as failed:
        if failed.errno != errno.EADDRINUSE:
            raise
        raise CliError(
            f"Port {settings.port} on {settings.countersign_host} is already in use. "
            "Please stop the other process or set PORT to a free port."
        ) from None
    return ""


async def _serve_here(settings: Settings, listen_fd: int | None) -> None:
    # aiohttp, bolt and the model loop: only a process that serves imports them. A supervisor
    # of workers never does; each worker pays for them once, alongside the others.
    from bot.server import serve as run

    if listen_fd is not None:  # a worker of ``bot.runtime.workers``: the socket is its parent's
        await run(settings, sock=socket.socket(fileno=listen_fd))
    else:
        await run(settings)


async def _serve_workers(settings: Settings, workers: int) -> None:
    from bot.runtime.workers import WorkerEndedError, listening, serve_workers

    sock = listening(settings.countersign_host, settings.port)
    try:
        await serve_workers(sock, workers)
    except WorkerEndedError as failed:
        raise CliError(str(failed)) from None
