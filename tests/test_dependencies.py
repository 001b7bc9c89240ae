"""Every distribution the bot and the engine import is declared in pyproject.toml."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_top_level_names() -> set[str]:
    """The top-level module names imported anywhere in bot/ and tools/."""
    names: set[str] = set()
    for package in ("bot", "tools"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"bot", "tools", "__future__"}


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares it."""
    return name.lower().replace("_", "-").replace(".", "-")


def distribution_name(requirement: str) -> str:
    """The distribution a PEP 508 requirement names (what precedes extras and versions)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return match.group(0)


def test_every_imported_distribution_is_declared() -> None:
    """A module the code imports comes from a distribution pyproject.toml names, not from one that
    happens to arrive as another's dependency (and would vanish when that one drops it)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {canonical(distribution_name(spec)) for spec in project["dependencies"]}
    providers = importlib.metadata.packages_distributions()
    undeclared = {
        name: providers.get(name, ["(not installed)"])
        for name in sorted(imported_top_level_names())
        if not {canonical(d) for d in providers.get(name, [])} & declared
    }
    assert undeclared == {}
