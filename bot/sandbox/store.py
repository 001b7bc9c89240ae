"""Keeps the sandbox's workspace across restarts in a JSON file beside the database; never keeps secrets.

The cards live on in the database when `make run` stops; without this the page forgot the
messages that carried them, and pressing one from the App Home made the bot's ``chat.update``
fail with ``message_not_found`` and post an audit line linking nowhere. Channels (DMs too),
messages, App Home views and assistant threads (titles, prompts) are written here a moment
after each change (atomically: a half-written file is never read) and read back at start. People and teams are the demo's and
are rebuilt each time; open modals, triggers and response URLs belong to one run and are not kept.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy.engine import make_url

from bot.sandbox.workspace import Change, Channel, Message, Workspace

__all__ = ["SAVE_AFTER", "WorkspaceStore", "state_file"]

log = structlog.get_logger("bot.sandbox.store")

Json = dict[str, Any]
SAVE_AFTER = 0.3  # seconds: a burst of changes (a card and its reactions) is one write
_VERSION = 1


def state_file(database_url: str) -> Path | None:
    """Where the workspace of the sandbox using ``database_url`` is kept; None for in-memory SQLite.

    Beside a SQLite file (``countersign.db`` → ``.countersign-sandbox.json``), so a second
    database gets a workspace of its own; for a server database, in the working directory.
    """
    url = make_url(database_url)
    name = url.database or ""
    if url.get_backend_name() == "sqlite":
        if name in ("", ":memory:") or name.startswith("file:"):
            return None
        database = Path(name)
        return database.with_name(f".{database.stem}-sandbox.json")
    return Path(f".{Path(name).stem or 'countersign'}-sandbox.json")


class WorkspaceStore:
    """Loads a workspace from ``path`` and saves it there, debounced, whenever it changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._workspace: Workspace | None = None
        self._pending: asyncio.TimerHandle | None = None

    def load(self, workspace: Workspace) -> None:
        """Puts the saved channels, messages and homes into ``workspace``; a bad file is set aside."""
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
            _restore(workspace, saved)
        except FileNotFoundError:
            return
        except (ValueError, KeyError, TypeError, AttributeError) as broken:
            aside = self.path.with_suffix(".broken.json")
            self.path.replace(aside)
            log.warning(
                "sandbox_state_unreadable",
                path=str(self.path),
                kept_as=str(aside),
                error=str(broken),
            )

    def attach(self, workspace: Workspace) -> None:
        """Saves ``workspace`` shortly after each change from now on."""
        self._workspace = workspace
        workspace.listeners.append(self._changed)

    def _changed(self, change: Change) -> None:
        if self._pending is None:
            self._pending = asyncio.get_running_loop().call_later(SAVE_AFTER, self.save)

    def save(self) -> None:
        """Writes the workspace now: to a temporary file first, then renamed over the old one."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if self._workspace is None:
            return
        body = json.dumps(_dump(self._workspace), ensure_ascii=False, separators=(",", ":"))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=self.path.name, dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(body)
            Path(temporary).replace(self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _dump(workspace: Workspace) -> Json:
    return {
        "version": _VERSION,
        "channels": [
            {**asdict(c), "members": sorted(c.members)} for c in workspace.channels.values()
        ],
        "messages": [{**asdict(m), "reactions": sorted(m.reactions)} for m in workspace.messages],
        "homes": workspace.homes,
        "assistant": list(workspace.assistant.values()),
    }


def _restore(workspace: Workspace, saved: Json) -> None:
    if saved.get("version") != _VERSION:
        raise ValueError(f"unknown version {saved.get('version')!r}")
    channels = [Channel(**{**c, "members": set(c["members"])}) for c in saved["channels"]]
    messages = [Message(**{**m, "reactions": set(m["reactions"])}) for m in saved["messages"]]
    homes = {str(user): dict(view) for user, view in saved["homes"].items()}
    for channel in channels:
        known = workspace.channels.get(channel.id)
        if known is not None:
            channel.members |= known.members
        workspace.channels[channel.id] = channel
    workspace.messages[:] = messages
    workspace.homes.update(homes)
    for thread in saved.get("assistant", []):
        # A status belonged to a turn of the run that stopped: it is never shown again.
        kept = {k: v for k, v in thread.items() if k != "status"}
        workspace.assistant[(str(thread["channel"]), str(thread["thread_ts"]))] = kept
    # New timestamps and view ids carry on after the saved ones: the page orders by them, and
    # a repeated one would replace an old message in the browser.
    last_ts = max((_number(m.ts.partition(".")[2]) for m in messages), default=0)
    last_view = max((_number(str(v.get("id", ""))[1:]) for v in homes.values()), default=0)
    workspace.continue_counters(ts=last_ts + 1, views=last_view + 1)


def _number(digits: str) -> int:
    return int(digits) if digits.isdigit() else 0
