"""Reads the ``mcpServers`` JSON of Claude Desktop, Cursor and VS Code; connects nothing.

Claude Desktop and Cursor write ``{"mcpServers": {name: {"command", "args", "env"} |
{"url", "headers"}}}``; VS Code writes the same under ``"servers"`` (or ``"mcp": {"servers"}``
in its settings) with a ``"type"`` of ``stdio`` or ``http``. Each server becomes the fields of
the engine's ``SourceConfig``, with a note for whatever had to change on the way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.cli.failures import CliError

__all__ = ["Imported", "read_servers"]

_NAME_CHARS = re.compile(r"[^a-z0-9-]+")
_MAX_NAME = 20
# ``${env:NAME}`` (Cursor, VS Code) reads a variable when the server starts, as ``${NAME}`` and
# ``$NAME`` do here; ``${input:…}`` asks a person, which nothing here can do.
_ENV_VARIABLE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_WHOLE_VARIABLE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_PROMPTED = re.compile(r"\$\{input:")
_KNOWN = frozenset({"type", "command", "args", "env", "url", "headers"})


@dataclass(frozen=True, slots=True)
class Imported:
    """One server of the file: its fields for ``SourceConfig``, or why it was skipped."""

    given: str
    name: str
    fields: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None


def read_servers(path: Path) -> list[Imported]:
    """The servers a Claude Desktop, Cursor or VS Code file declares, in the file's order.

    Raises:
        CliError: the file cannot be read, is not JSON (with its line and column), or declares
            no servers.
    """
    servers = _servers(_parsed(path), path)
    found: list[Imported] = []
    taken: set[str] = set()
    for given, entry in servers.items():
        imported = _entry(given, entry)
        if imported.fields is not None and imported.name in taken:
            twice = f"another server of the file is already named {imported.name!r}"
            imported = Imported(given, imported.name, None, imported.notes, skipped=twice)
        taken.add(imported.name)
        found.append(imported)
    return found


def _parsed(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as failed:
        raise CliError(f"Could not read {path}: {failed.strerror or failed}.") from None
    except UnicodeDecodeError:
        raise CliError(f"{path} is not UTF-8 text; give the JSON file itself.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as bad:
        raise CliError(
            f"{path} is not valid JSON: {bad.msg} at line {bad.lineno}, column {bad.colno}. "
            "Please fix it there and import it again."
        ) from None


def _servers(document: Any, path: Path) -> dict[str, Any]:
    nested = document.get("mcp") if isinstance(document, dict) else None
    for holder, key in ((document, "mcpServers"), (document, "servers"), (nested, "servers")):
        if isinstance(holder, dict) and isinstance(holder.get(key), dict) and holder[key]:
            return dict(holder[key])
    raise CliError(
        f'{path} declares no servers: expected an object with "mcpServers" (Claude Desktop, '
        'Cursor) or "servers" (VS Code), each server a "command" or a "url".'
    )


def _entry(given: str, entry: Any) -> Imported:
    name, notes = _valid_name(given)
    if not name:
        return Imported(given, given, None, skipped=notes[0])
    if not isinstance(entry, dict):
        return Imported(given, name, None, skipped="its entry is not an object")
    kind = str(entry.get("type", "")).lower()
    if kind not in {"", "stdio", "http", "streamable-http"}:
        why = f"type {kind!r} is not one Countersign speaks (stdio and http are)"
        return Imported(given, name, None, skipped=why)
    ignored = sorted(set(entry) - _KNOWN)
    if ignored:
        notes.append(f"{given!r}: ignored {', '.join(ignored)}")
    fields: dict[str, Any] = {
        key: entry[key] for key in ("command", "args", "env", "url", "headers") if key in entry
    }
    for key in ("env", "headers"):
        if isinstance(fields.get(key), dict):
            fields[key] = {str(k): _variable(str(v)) for k, v in fields[key].items()}
            if any(_PROMPTED.search(v) for v in fields[key].values()):
                return Imported(given, name, None, notes, skipped=_prompted(key))
    return Imported(given, name, fields, notes)


def _valid_name(given: str) -> tuple[str, list[str]]:
    """A source name made of ``given``: lower-case, ``_`` as ``-``, at most 20 characters."""
    name = _NAME_CHARS.sub("-", given.strip().lower().replace("_", "-")).strip("-")
    name = re.sub(r"^[^a-z]+", "", name)[:_MAX_NAME].rstrip("-")
    if not name:
        return "", ["no valid name can be made of it; add it with countersign mcp add"]
    if name == given:
        return name, []
    return name, [
        f"renamed {given!r} to {name!r}: a server's name is up to 20 lower-case letters, digits "
        "and hyphens"
    ]


def _variable(value: str) -> str:
    value = _ENV_VARIABLE.sub(r"${\1}", value)
    found = _WHOLE_VARIABLE.match(value)
    return f"${found.group(1)}" if found else value


def _prompted(key: str) -> str:
    return (
        f"its {key} asks for ${{input:…}}, which only an editor can; add it with "
        "countersign mcp add and write the value as $VARIABLE"
    )
