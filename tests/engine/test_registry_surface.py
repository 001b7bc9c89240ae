"""The registry's public surface is what the bot asks of the engine, and it hands out no store."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from tools import Registry

ROOT = Path(__file__).resolve().parents[2]
# What the engine keeps to itself: its stores, its signer, its clock and this process's lease.
INSIDES = ("db", "cards", "audit", "signer", "lease", "clock", "deps")
MOST = 25


def _public(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}


def _surface(registry: Registry) -> set[str]:
    """Every public name a registry answers to: its methods, properties and attributes."""
    return _public(Registry) | {n for n in vars(registry) if not n.startswith("_")}


def test_the_registry_offers_at_most_25_public_names(registry: Registry) -> None:
    """Methods, properties and attributes together: a new one means another one goes."""
    surface = _surface(registry)
    assert len(surface) <= MOST, sorted(surface)


def test_the_registry_hands_out_no_store_clock_signer_or_lease(registry: Registry) -> None:
    """Neither the registry nor its three doors answer to a name of the engine's insides."""
    doors = {name: type(getattr(registry, name)) for name in ("batches", "showing", "sweeps")}
    for owner, names in [("Registry", _surface(registry))] + [
        (name, _public(door)) for name, door in doors.items()
    ]:
        assert not names & set(INSIDES), (owner, sorted(names & set(INSIDES)))


def test_the_bot_reaches_nothing_inside_the_registry() -> None:
    """No module of the bot names a registry's store, clock, signer or lease, or its privates."""
    reach = re.compile(r"registry\.(?:" + "|".join(INSIDES) + r")\b|registry\._")
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "bot").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if reach.search(line)
    ]
    assert found == []
