"""Renders a batch card (several writes, one Approve) as Block Kit, and posts it; never decides anything.

From the neutral ``bot.batchspec.BatchSpec``: a header, the line saying what one press does,
one section per write (its sentence with ids and names, its warning, then its outcome), the
approvals and expiry lines, and one actions block. Twenty writes make at most 26 blocks, well
inside Slack's 50; every section stays short enough to read on a phone.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.batchspec import BatchSpec, of_batch
from bot.cardspec import Verb
from bot.placement import Placement, SlackPlacement
from bot.slack import texts
from bot.slack.blocks import (
    EVERY,
    Block,
    button,
    context,
    copy_verbs,
    dialog,
    plain,
    section,
)
from bot.slack.mrkdwn import esc, esc_data
from tools.batching import BatchRecord

__all__ = ["batch_message", "render_batch", "update_batch"]

log = structlog.get_logger("bot.slack.batch")

# A batch has no Edit: each of its cards is edited, if at all, before it joins the batch.
_BATCH_VERBS: Final[frozenset[Verb]] = frozenset({"approve", "reject", "withdraw"})
_MARKS: Final = {
    "done": ":white_check_mark:",
    "failed": ":x:",
    "executing": ":hourglass_flowing_sand:",
}
_VALUE = 2000


def _line(number: int, spec: BatchSpec, index: int) -> Block:
    line = spec.lines[index]
    said = f"*{number}.* {esc_data(line.summary)}"
    if line.warning:
        said += f"\n:warning: {esc_data(line.warning)}"
    if line.result:
        mark = _MARKS.get(line.status, ":no_entry_sign:")
        said += f"\n{mark} {esc_data(line.result)}"
    return section(said)


def _confirm(spec: BatchSpec, verb: Verb) -> dict[str, Any] | None:
    if verb == "approve":
        return dialog(spec.confirm[0], spec.confirm[1], texts.confirm_ok())
    if verb == "withdraw":
        count = len(spec.lines)
        return dialog(texts.withdraw_title(), texts.withdraw_batch_text(count), texts.withdraw_ok())
    return None


def _buttons(spec: BatchSpec, verbs: frozenset[Verb]) -> list[Block]:
    if len(spec.token) > _VALUE:
        raise ValueError(f"batch {spec.batch_id}: token longer than a button value may be")
    shown = [
        button(a, _confirm(spec, a.verb))
        for a in spec.actions
        if a.verb in verbs and a.verb in _BATCH_VERBS
    ]
    if not shown:
        return []
    # ``card-<batch id>-<nonce>``: what a press reads beside the button, to show it afterwards.
    block_id = f"card-{spec.batch_id}-{uuid.uuid4().hex[:8]}"
    return [{"type": "actions", "block_id": block_id, "elements": shown}]


def render_batch(spec: BatchSpec, *, verbs: frozenset[Verb] = EVERY) -> list[Block]:
    """The batch card: heading, what one press does, a section per write, then the lines
    under it and the buttons among ``verbs`` (none once settled)."""
    head = {
        "type": "header",
        "block_id": f"head-{uuid.uuid4().hex[:8]}",
        "text": plain(spec.title, 150),
    }
    blocks: list[Block] = [head, context(esc(spec.intro))]
    blocks += [_line(n, spec, n - 1) for n in range(1, len(spec.lines) + 1)]
    tail = []
    if spec.progress:
        tail.append(texts.progress(spec.progress))
    if spec.is_pending:
        tail.append(texts.card_for(None, spec.expires_at))
    elif spec.decided is not None:
        tail.append(
            texts.decided_line(spec.decided.by, None, spec.decided.at, verb=spec.decided.verb)
        )
    if spec.reason:
        tail.append(texts.outcome_line("Reason", spec.reason))
    if [t for t in tail if t]:
        blocks.append(context("\n".join(t for t in tail if t)))
    return [*blocks, *_buttons(spec, verbs)]


def batch_message(
    batch: BatchRecord, *, token: str, private: bool, approved: bool = False
) -> tuple[str, list[Block]]:
    """The notification text and blocks of a batch copy as it stands now: a private copy
    whose reader ``approved`` it (a first of two) has no buttons left."""
    spec = of_batch(batch, token=token)
    verbs = copy_verbs(private=private, approved=approved)
    return texts.notification(spec.notification), render_batch(spec, verbs=verbs)


async def update_batch(client: AsyncWebClient, batch: BatchRecord, placement: Placement) -> None:
    """Shows the batch in place on one copy; a failed update is logged (the next one retries)."""
    assert isinstance(placement, SlackPlacement)
    text, blocks = batch_message(
        batch,
        token=placement.token,
        private=placement.conversation is None,
        approved=placement.approved_by_reader(*batch.live),
    )
    try:
        await client.chat_update(
            channel=placement.channel, ts=placement.ts, text=text, parse="none", blocks=blocks
        )
    except SlackApiError as failed:
        log.error(
            "batch_update_failed",
            channel=placement.channel,
            batch_id=batch.batch_id,
            error=str(failed.response.get("error")),
        )
        return
    log.info("batch_updated", channel=placement.channel, batch_id=batch.batch_id)
