"""Claims inbound Slack deliveries once across every process, through the ``receipts`` table.

Never decides what to answer; only whether this process is the one to answer. Inserting a key
is the claim and a duplicate key is the refusal, so a retried event (same ``event_id``) or a
message delivered as both ``app_mention`` and ``message.channels`` (same channel and ts) is
answered exactly once, whichever process receives it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from tools.db import Database, ReceiptRow

__all__ = ["claim", "claim_all", "event_key", "message_key", "taken", "thread_key"]


def event_key(event_id: str) -> str:
    return f"slack:event:{event_id}"


def message_key(channel: str, ts: str) -> str:
    return f"slack:msg:{channel}:{ts}"


def thread_key(installation: str, channel: str, thread_ts: str) -> str:
    """Marks a thread the bot has answered in, so follow-ups need no new mention."""
    return f"slack:thread:{installation}:{channel}:{thread_ts}"


async def claim(db: Database, key: str, now: datetime) -> bool:
    """True for the first caller with this key, False for every later one."""
    async with db.session(write=True) as session:
        session.add(ReceiptRow(key=key[:255], at=now))
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
            return False
    return True


async def claim_all(db: Database, keys: Sequence[str], now: datetime) -> str | None:
    """Claims every key; None when all were new, else the first key already taken.

    The usual case, every key new, is one transaction instead of one per key (a burst spent a
    good part of its database time committing receipts). A duplicate rolls it back and claims
    key by key as before, so what ends claimed is the same either way.
    """
    async with db.session(write=True) as session:
        session.add_all([ReceiptRow(key=key[:255], at=now) for key in keys])
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
        else:
            return None
    for key in keys:
        if not await claim(db, key, now):
            return key
    return None


async def taken(db: Database, key: str) -> bool:
    async with db.session() as session:
        found = await session.scalar(select(ReceiptRow.key).where(ReceiptRow.key == key[:255]))
        return found is not None
