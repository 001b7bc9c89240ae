"""Keeps each Slack press in the inbox before its ack, so a press a killed process took is decided by another; never decides one.

A press is decided after its ack. A server killed in between took the press with it: Slack had
its 200, so nobody pressed again, and the card never changed (the soak's "the update of <card>
after Arjun's press" unseen). Now a press is kept like a message (``bot.runtime.inbox``), marked
answered once decided, and a living process finding one left by a gone process decides it again
(``SlackRoutes.resume``). Deciding twice is safe: the engine approves a card once, by a
conditional claim; a press on a card its first press decided shows that decision, the way a
second press does.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import asdict
from typing import Any

from bot import presses
from bot.placement import SlackPlacement
from bot.services import Services
from bot.slack.adapter import Where

__all__ = ["answered_after", "keep_press", "kept_press"]

Work = Coroutine[Any, Any, None]


async def keep_press(
    services: Services, where: Where, press: presses.Press, *, trigger: object
) -> str | None:
    """Keeps the press before its ack (the listener returns first: bolt answers Slack after
    it); its key in the inbox, named by the press's trigger (None: Slack gave none)."""
    if not trigger:
        return None
    key = f"slack:press:{trigger}"
    said = asdict(press)
    del said["arrived"]  # this process's clock
    said["pressed"] = press.pressed.model_dump(mode="json") if press.pressed else None
    message = {"where": asdict(where), "press": said}
    await services.inbox.keep(
        key, platform="slack", installation=where.installation, message=message
    )
    return key


def kept_press(message: dict[str, Any]) -> tuple[Where, presses.Press] | None:
    """Where a kept press was made, and the press, as ``keep_press`` stored them; None for a
    kept message that is not a press."""
    said = message.get("press")
    if not isinstance(said, dict):
        return None
    pressed = said.get("pressed")
    press = presses.Press(
        **{**said, "pressed": SlackPlacement.model_validate(pressed) if pressed else None}
    )
    return Where(**message["where"]), press


async def answered_after(services: Services, key: str | None, work: Callable[[], Work]) -> None:
    """Runs the press's work, then marks it answered, however it ended but cut off: a press
    cut off (a shutdown's drain ran out) is left to another process, as a turn is."""
    cut = False
    try:
        await work()
    except asyncio.CancelledError:
        cut = True
        raise
    finally:
        if not cut:
            await services.inbox.answered(key, last=True)
