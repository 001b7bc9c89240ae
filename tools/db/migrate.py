"""Brings a database's schema up to date with Alembic; the only way tables are created."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config

__all__ = ["alembic_config", "upgrade", "upgrade_async"]

_SCRIPTS = Path(__file__).with_name("migrations")


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Migrates the database at ``url`` (blocking; call from outside a running event loop)."""
    command.upgrade(alembic_config(url), revision)


async def upgrade_async(url: str, revision: str = "head") -> None:
    """Migrates from inside an event loop (Alembic drives its own loop in a worker thread)."""
    await asyncio.to_thread(upgrade, url, revision)
