"""Claims inbound Slack deliveries once across every process, through the ``receipts`` table.

Never decides what to answer; only whether this process is the one to answer. Inserting a key
is the claim and a duplicate key is the refusal, so a retried event (same ``event_id``) or a
message delivered as both ``app_mention`` and ``message.channels`` (same channel and ts) is
answered exactly once, whichever process receives it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from tools.db import Database, ReceiptRow

__all__ = [
    "claim",
    "claim_all",
    "claim_on",
    "event_key",
    "mark_on",
    "message_key",
    "taken",
    "thread_key",
]


# Core statements built once (their compiled form is cached): every turn claims two or three
# keys, and an ORM session's unit of work cost more than the INSERT it runs.
_TABLE = cast("Table", ReceiptRow.__table__)
_CLAIM = insert(_TABLE)
_TAKEN = select(_TABLE.c.key).where(_TABLE.c.key == bindparam("key"))
_ANY_TAKEN = select(_TABLE.c.key).where(_TABLE.c.key.in_(bindparam("keys", expanding=True)))


def event_key(event_id: str) -> str:
    return f"slack:event:{event_id}"


def message_key(channel: str, ts: str) -> str:
    return f"slack:msg:{channel}:{ts}"


def thread_key(installation: str, channel: str, thread_ts: str) -> str:
    """Marks a thread the bot has answered in, so follow-ups need no new mention."""
    return f"slack:thread:{installation}:{channel}:{thread_ts}"


async def claim(db: Database, key: str, now: datetime) -> bool:
    """True for the first caller with this key, False for every later one."""
    try:
        async with db.begin(write=True) as conn:
            await conn.execute(_CLAIM, [{"key": key[:255], "at": now}])
    except IntegrityError:
        return False
    return True


async def claim_all(db: Database, keys: Sequence[str], now: datetime) -> str | None:
    """Claims every key; None when all were new, else the first key already taken.

    The usual case, every key new, is one transaction instead of one per key (a burst spent a
    good part of its database time committing receipts). A duplicate rolls it back and claims
    key by key as before, so what ends claimed is the same either way.
    """
    if not keys:
        return None
    try:
        async with db.begin(write=True) as conn:
            await conn.execute(_CLAIM, [{"key": key[:255], "at": now} for key in keys])
    except IntegrityError:
        pass
    else:
        return None
    for key in keys:
        if not await claim(db, key, now):
            return key
    return None


async def claim_on(conn: AsyncConnection, keys: Sequence[str], now: datetime) -> None:
    """Claims every key inside the caller's transaction; a key already taken raises
    ``IntegrityError`` (at the latest on commit), and the whole transaction is void."""
    if keys:
        await conn.execute(_CLAIM, [{"key": key[:255], "at": now} for key in keys])


async def mark_on(conn: AsyncConnection, keys: Sequence[str], now: datetime) -> None:
    """Makes sure every key is claimed, inside the caller's transaction: a mark is claimed
    again by every later message of its thread, so those already there are left alone. Two
    turns racing for one new mark: the loser's ``IntegrityError`` voids its transaction."""
    if not keys:
        return
    wanted = [key[:255] for key in keys]
    there = set((await conn.execute(_ANY_TAKEN, {"keys": wanted})).scalars())
    await claim_on(conn, [key for key in wanted if key not in there], now)


async def taken(db: Database, key: str) -> bool:
    async with db.begin() as conn:
        found = (await conn.execute(_TAKEN, {"key": key[:255]})).first()
    return found is not None
