"""Slack's inbound payloads for the tests: the sandbox's own builders, so the two never drift apart."""

from __future__ import annotations

from bot.sandbox.payloads import (
    TEAM,
    block_action,
    command,
    event,
    form,
    message,
    signed,
    view_submission,
)

__all__ = [
    "TEAM",
    "block_action",
    "command",
    "event",
    "form",
    "message",
    "signed",
    "view_submission",
]
