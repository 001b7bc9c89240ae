"""The audit table printed by `countersign audit`: no stored text can drive the terminal."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.cli.audit import render_table
from tools.db import AuditRow

ATTACK = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202edesrever\x7f\x00done"


def _row(**changes: object) -> AuditRow:
    values: dict[str, object] = {
        "at": datetime(2026, 3, 1, 10, 0, tzinfo=UTC),
        "agent": "countersign",
        "tool": "reject_request",
        "user_id": 2,
        "tenant_id": 1,
        "scope": "write",
        "outcome": "rejected",
        "detail": "Reason: too much",
        "rows": 0,
        "took_ms": 1.5,
        "card_id": "c0ffee00",
    }
    return AuditRow(**(values | changes))


def test_control_sequences_in_any_field_are_stripped() -> None:
    """A reject reason, a name or a tool holding ESC/OSC/CSI, C1, DEL or bidi overrides prints
    as inert text: the operator's terminal title and screen are left alone."""
    row = _row(detail=f"Reason: {ATTACK}", tool=f"tool{ATTACK}", agent=ATTACK, card_id=ATTACK)
    table = render_table([row], {2: f"Meera{ATTACK}"}, {1: f"Fiesta{ATTACK}"})
    lines = table.split("\n")
    assert len(lines) == 2
    for char in "\x1b\x07\x9b\u202e\x7f\x00":
        assert char not in table
    assert "]0;pwned" in table and "desrever" in table
