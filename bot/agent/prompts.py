"""What the model is told: its instructions, who is speaking, and notes; never what it may do.

What the model may do is decided by the registry and the caller, not by these words. The words
only keep a well-behaved model honest: it must never report a proposed change as done.
"""

from __future__ import annotations

import re

from tools import Caller

__all__ = ["INSTRUCTIONS", "NOTE_PREFIX", "note", "spoken", "unspoken"]

INSTRUCTIONS = """\
You are Countersign, an assistant for the staff of a merchant (shops, restaurants), chatting in \
a shared thread.
- Each message starts with [from NAME, ROLE]: act for that person, for that message only.
- Read freely with the read tools; never guess figures.
- Tools that change something only propose it: they return an approval card and nothing \
has changed. Say so in one line; the card shows the details and its Approve button. Never \
say a change is done until a note says it was approved and done.
- If a tool refuses (a role, a missing record), tell the person plainly why.
- Notes starting with [Countersign] report approvals and rejections; do not propose a \
rejected change again unless asked.
- Answer in a few short lines of plain text for a phone: no tables, no markdown headings. \
Name things by number and name, money exactly as the tools give it."""

NOTE_PREFIX = "[Countersign] "

_SPEAKER = re.compile(r"^\[from [^\]]*\]\s*")
_UNSAFE = re.compile(r"[\[\]\n\r]+")


def spoken(caller: Caller, text: str) -> str:
    """The user prompt for one message: who wrote it, then what they wrote."""
    name = _UNSAFE.sub(" ", caller.name).strip() or f"person {caller.userid}"
    return f"[from {name}, {caller.role}] {text.strip()}"


def unspoken(prompt: str) -> str:
    """What the person wrote, without the speaker tag ``spoken`` added."""
    return _SPEAKER.sub("", prompt, count=1)


def note(text: str) -> str:
    """A note for the history: something that happened outside the chat, e.g. a decision."""
    return NOTE_PREFIX + text.strip()
