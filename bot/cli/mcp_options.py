"""Reads what a merchant typed about an MCP server (``NAME=VALUE``, ``TOOL=RULE``); stores nothing.

Every option here becomes plain data that ``bot.cli.mcp`` hands to the engine's ``SourceConfig``
to validate; a shape the engine cannot take is a ``CliError`` saying what to type instead.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from typing import Any

from bot.cli.failures import CliError

__all__ = [
    "ROLES",
    "SCHEME",
    "looks_secret",
    "pairs",
    "rules",
    "scopes",
    "sentences",
    "written_as_variables",
]

ROLES = ("staff", "manager", "owner")
_UNITS = ("major", "minor")
_SEPARATOR = "__"
# Header and variable names that carry credentials, and values shaped like one.
_SECRET_NAME = re.compile(r"auth|token|key|secret|passw|cookie|credential|session", re.IGNORECASE)
SCHEME = re.compile(r"^(bearer|basic|token|digest)\s+(?=\S)", re.IGNORECASE)
_TOKEN_LIKE = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_.=+/-]{24,}$")
# "$TOKEN", "${TOKEN}", "Bearer ${TOKEN}": read from the environment when connecting.
_REFERENCE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
_SCHEME_ONLY = re.compile(r"^\s*(?:(?:bearer|basic|token|digest)\s+)?$", re.IGNORECASE)


def pairs(option: str, given: Iterable[str] | None, example: str) -> dict[str, str]:
    """``--header NAME=VALUE`` (or ``--env``) given several times, as a mapping."""
    found: dict[str, str] = {}
    for text in given or ():
        name, equals, value = text.partition("=")
        if not equals or not name.strip():
            raise CliError(f"{option} {text!r} needs NAME=VALUE, like {option} {example}.")
        found[name.strip()] = value
    return found


def rules(source: str, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Each tool's rule from ``--read``, ``--write``, ``--role``, ``--amount``, ``--target``,
    ``--editable``, ``--preview`` and ``--sentence``, as the fields of the engine's ``ToolRule``."""
    found: dict[str, dict[str, Any]] = {
        tool: {"scope": scope} for tool, scope in scopes(source, args).items()
    }

    def rule(tool: str) -> dict[str, Any]:
        return found.setdefault(_tool(source, tool), {})

    for tool, role in _tool_values("--role", args.role, "pay_supplier=manager"):
        if role not in ROLES:
            raise CliError(f"--role {tool}={role}: the role is one of {', '.join(ROLES)}.")
        rule(tool)["role"] = role
    for tool, text in _tool_values("--amount", args.amount, "pay_supplier=amount:major"):
        rule(tool).update(_amount(tool, text))
    for option, given, field in (
        ("--target", args.target, "targets"),
        ("--editable", args.editable, "editable"),
    ):
        for tool, text in _tool_values(option, given, "pay_supplier=supplier"):
            rule(tool)[field] = _names(option, tool, text)
    for tool, text in _tool_values("--preview", args.preview, "edit_file=dry-run:dryRun"):
        rule(tool)["preview"] = _preview(tool, text)
    for tool, said in sentences(source, args.sentence).items():
        if said is None:
            raise CliError(f"--sentence {tool}= is empty; write the sentence after the =.")
        rule(tool)["sentence"] = said
    return found


def sentences(source: str, given: Iterable[str] | None) -> dict[str, str | None]:
    """Each ``--sentence TOOL=TEXT``, by the server's own tool name; None for ``TOOL=`` (no
    sentence: the card reads the tool's title)."""
    found: dict[str, str | None] = {}
    for text in given or ():
        tool, equals, said = text.partition("=")
        if not equals or not tool.strip():
            raise CliError(
                f"--sentence {text!r} needs TOOL=TEXT, like --sentence "
                "'record_payment=Pay {amount} to {supplier_id}'."
            )
        found[_tool(source, tool)] = " ".join(said.split()) or None
    return found


def scopes(source: str, args: argparse.Namespace) -> dict[str, str]:
    """Each tool named by ``--read`` or ``--write``, by the server's own name, and which."""
    found: dict[str, str] = {}
    for scope in ("read", "write"):
        for tool in getattr(args, scope) or ():
            said = found.setdefault(_tool(source, tool), scope)
            if said != scope:
                raise CliError(f"{tool} is given as both --read and --write; keep one of them.")
    return found


def written_as_variables(value: str) -> bool:
    """Whether a value holds no secret itself: environment references, after a scheme at most."""
    return bool(_REFERENCE.search(value)) and bool(_SCHEME_ONLY.match(_REFERENCE.sub("", value)))


def looks_secret(name: str, value: str) -> bool:
    """Whether a value written out looks like a credential, by its name or its shape."""
    return bool(
        _SECRET_NAME.search(name) or SCHEME.match(value) or _TOKEN_LIKE.match(value.strip())
    )


def _tool(source: str, tool: str) -> str:
    """The server's own name of a tool, also when given as the model sees it (source__tool)."""
    name = tool.strip()
    prefix = f"{source}{_SEPARATOR}"
    name = name.removeprefix(prefix) if name.startswith(prefix) else name
    if not name:
        raise CliError("A tool's name is empty; give the name the server lists.")
    return name


def _tool_values(option: str, given: Iterable[str] | None, example: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for text in given or ():
        tool, equals, value = text.partition("=")
        if not equals or not tool.strip() or not value.strip():
            raise CliError(f"{option} {text!r} needs TOOL=VALUE, like {option} {example}.")
        found.append((tool.strip(), value.strip()))
    return found


def _amount(tool: str, text: str) -> dict[str, str]:
    argument, _, unit = text.partition(":")
    unit = unit.strip().lower() or "major"
    if unit not in _UNITS or not argument.strip():
        raise CliError(
            f"--amount {tool}={text}: give ARGUMENT[:major|minor], like --amount "
            f"{tool}=amount (7800.50 in the merchant's currency) or {tool}=amount_cents:minor."
        )
    return {"amount": argument.strip(), "unit": unit}


def _names(option: str, tool: str, text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise CliError(f"{option} {tool}={text}: name the arguments separated by commas.")
    return names


def _preview(tool: str, text: str) -> dict[str, str]:
    kind, _, name = text.partition(":")
    kinds = {"dry-run": "dry_run", "tool": "tool"}
    if kind.strip() not in kinds or not name.strip():
        raise CliError(
            f"--preview {tool}={text}: give dry-run:ARGUMENT (an argument the server takes as "
            f"true to only say what it would do) or tool:COMPANION (a read tool it offers)."
        )
    return {"kind": kinds[kind.strip()], "name": name.strip()}
