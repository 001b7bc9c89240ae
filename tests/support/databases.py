"""Per-test databases on SQLite and PostgreSQL, copied from a template migrated (and seeded) once."""

from __future__ import annotations

import asyncio
import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from tests.support.postgres import PostgresCluster
from tools.db import Database
from tools.db.migrate import upgrade

__all__ = ["Templates", "build_templates"]

_TEMPLATE = "countersign_template"
_counter = itertools.count()


async def _seed(url: str) -> None:
    from tools.toolsets.merchant.demo import load_demo

    db = Database(url)
    try:
        await load_demo(db)
    finally:
        await db.dispose()


@dataclass
class Templates:
    sqlite_file: Path
    cluster: PostgresCluster

    def sqlite_copy(self, directory: Path) -> str:
        target = directory / "countersign.db"
        shutil.copyfile(self.sqlite_file, target)
        return f"sqlite+aiosqlite:///{target}"

    async def postgres_copy(self) -> str:
        name = f"cs_test_{next(_counter)}"
        conn = await asyncpg.connect(self.cluster.url().replace("+asyncpg", ""))
        try:
            await conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{_TEMPLATE}"')
        finally:
            await conn.close()
        return self.cluster.url(name)

    async def postgres_drop(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        conn = await asyncpg.connect(self.cluster.url().replace("+asyncpg", ""))
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


def build_templates(directory: Path, cluster: PostgresCluster) -> Templates:
    """Migrates and seeds one SQLite file and one PostgreSQL database to copy for every test."""
    sqlite_file = directory / "template.db"
    sqlite_url = f"sqlite+aiosqlite:///{sqlite_file}"
    upgrade(sqlite_url)
    asyncio.run(_seed(sqlite_url))

    async def create() -> None:
        conn = await asyncpg.connect(cluster.url().replace("+asyncpg", ""))
        try:
            await conn.execute(f'CREATE DATABASE "{_TEMPLATE}"')
        finally:
            await conn.close()

    asyncio.run(create())
    upgrade(cluster.url(_TEMPLATE))
    asyncio.run(_seed(cluster.url(_TEMPLATE)))
    return Templates(sqlite_file, cluster)
