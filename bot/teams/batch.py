"""Renders a batch card (several writes, one Approve) as an Adaptive Card for Teams; never calls Teams.

The batch's neutral description (``bot.batchspec``) in the same three views as a single card:
everyone sees its status, a person it is issued to sees "Approve all N" and Reject (with a
reason), its asker (when others decide it) sees Withdraw. Each write is a line of data (a
``TextRun``), its outcome under it once decided. The buttons' data names the batch; the token
decides.
"""

from __future__ import annotations

from typing import Any

from bot import batchwords, wording
from bot.batchspec import BatchSpec, of_batch
from bot.teams.adaptive import (
    VERB_APPROVE,
    VERB_REFRESH,
    VERB_REJECT,
    VERB_WITHDRAW,
    View,
    data_line,
    execute,
    press_data,
    reason_input,
    safe,
)
from tools import Caller
from tools.batching import BatchRecord

__all__ = ["batch_card", "batch_view"]

Json = dict[str, Any]
_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
_MARKS = {"done": "✅ ", "failed": "❌ ", "executing": "⏳ "}


def _lines(spec: BatchSpec) -> list[Json]:
    body: list[Json] = []
    for number, line in enumerate(spec.lines, start=1):
        body.append(data_line((f"{number}. ", True), (line.summary, False)))
        if line.warning:
            warn = data_line(("⚠ ", False), (line.warning, False))
            body.append({"type": "Container", "style": "warning", "items": [warn]})
        if line.result:
            mark = _MARKS.get(line.status, "⛔ ")
            body.append(data_line((mark, False), (line.result, False), subtle=True))
    return body


def _data(spec: BatchSpec, verb: str) -> Json:
    return press_data(spec.batch_id, spec.token, verb)


def _execute(spec: BatchSpec, verb: str, title: str, style: str, inputs: str) -> Json:
    return execute(spec.batch_id, spec.token, verb, title, style, inputs)


def _controls(spec: BatchSpec, view: View) -> tuple[list[Json], list[Json]]:
    offered = {action.verb for action in spec.actions}
    if view == "asker":
        withdraw = _execute(spec, VERB_WITHDRAW, wording.WITHDRAW, "default", "none")
        return [], [withdraw] if VERB_WITHDRAW in offered else []
    if view == "everyone" or not {VERB_APPROVE, VERB_REJECT} <= offered:
        return [], []
    reason = reason_input()
    approve = batchwords.approve_all(len(spec.lines))
    return [reason], [
        _execute(spec, VERB_APPROVE, approve, "positive", "none"),
        _execute(spec, VERB_REJECT, batchwords.REJECT_ALL, "destructive", "auto"),
    ]


def _tail(spec: BatchSpec) -> list[Json]:
    lines: list[Json] = []
    if spec.progress:
        lines.append(data_line((spec.progress, False)))
    if spec.decided is not None:
        lines.append(
            data_line((f"{spec.decided.verb} by ", False), (spec.decided.by or "someone", True))
        )
    if spec.reason:
        lines.append(data_line(("Reason: ", True), (spec.reason, False)))
    return lines


def render_batch(
    spec: BatchSpec, *, view: View, issuee: str | None = None, notice: str | None = None
) -> Json:
    """The Adaptive Card of a batch as ``view`` sees it (twenty short lines stay well under
    Teams' size limit: each summary is cut to 400 characters)."""
    heading = {
        "type": "RichTextBlock",
        "inlines": [
            {"type": "TextRun", "text": safe(spec.title), "weight": "Bolder", "size": "Medium"}
        ],
    }
    body: list[Json] = [heading, data_line((spec.intro, False), subtle=True), *_lines(spec)]
    if notice:
        alert = data_line((notice, False))
        body.insert(0, {"type": "Container", "style": "attention", "items": [alert]})
    body += _tail(spec)
    card: Json = {"type": "AdaptiveCard", "$schema": _SCHEMA, "version": "1.5"}
    if spec.is_pending:
        inputs, actions = _controls(spec, view)
        body += inputs
        if actions:
            card["actions"] = actions
        if spec.token and issuee:
            refresh = {
                "type": "Action.Execute",
                "verb": VERB_REFRESH,
                "title": "Refresh",
                "data": _data(spec, VERB_REFRESH),
            }
            card["refresh"] = {"action": refresh, "userIds": [issuee]}
    card["body"] = body
    return card


def batch_view(batch: BatchRecord, caller: Caller | None) -> View:
    """What ``caller`` may still do with the batch (as ``view_of`` does for a card)."""
    live = batch.live
    if caller is None or not live:
        return "everyone"
    first = live[0]
    if first.issued_to_person(caller.userid, caller.tenantid) and not first.approved_by(
        caller.userid
    ):
        return "issuee"
    if (batch.userid, batch.tenantid) == (caller.userid, caller.tenantid):
        return "asker"
    return "everyone"


def batch_card(
    batch: BatchRecord,
    *,
    token: str,
    view: View,
    issuee: str | None = None,
    notice: str | None = None,
) -> tuple[Json, str]:
    """The batch's card as a copy shows it now, and its notification text."""
    spec = of_batch(batch, token=token)
    return render_batch(spec, view=view, issuee=issuee, notice=notice), spec.notification
