"""Renders a card description as an Adaptive Card 1.5 for Teams; never calls Teams.

Everything here is a pure function from a ``CardSpec`` to card JSON. Values from the merchant's
data, a person or the model go only into ``TextRun``s, which Teams never reads as markdown, so a
product called ``**[free](https://x)**`` shows as typed and links nowhere, and what a person
copies from a card is what runs; our own words go in ``TextBlock``s. Only ``{{DATE(`` and
``{{TIME(`` are broken up in data, because Teams expands them in card text.

Three views of one pending card: everyone sees its status (the message as posted); a person it
is issued to sees Approve, Edit (when it has values a person may change) and Reject; its asker,
when someone else decides it, sees Withdraw. A card of several writes shows a line per write
(a ``TextRun``) under its heading, its outcome under it once decided, and "Approve all N".
Teams asks for the view of the ids in ``refresh.userIds`` (``29:`` ids) through an
``Action.Execute`` "refresh"; a private copy in a 1:1 chat has one reader and is sent in their
view. A card stays under ``MAX_CARD_BYTES`` of JSON (Teams refuses messages near 28 KB once
wrapped).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Final, Literal

from bot.cards import wording as words
from bot.cards.cardspec import CardSpec
from tools import engine_time

__all__ = [
    "CARD_TYPE",
    "MAX_CARD_BYTES",
    "REASON_INPUT",
    "VERB_APPROVE",
    "VERB_EDIT",
    "VERB_REFRESH",
    "VERB_REJECT",
    "VERB_WITHDRAW",
    "View",
    "card_bytes",
    "notice_card",
    "render",
    "safe",
]

Json = dict[str, Any]
View = Literal["issuee", "asker", "everyone"]

CARD_TYPE: Final = "application/vnd.microsoft.card.adaptive"
VERB_APPROVE: Final = "approve"
VERB_EDIT: Final = "edit"
VERB_REJECT: Final = "reject"
VERB_WITHDRAW: Final = "withdraw"
VERB_REFRESH: Final = "refresh"
REASON_INPUT: Final = "reason"
MAX_CARD_BYTES: Final = 28_000
_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
_MAX_REFRESH_USERS = 60


# Teams expands {{DATE(…)}} and {{TIME(…)}} in card text, TextRuns included. Only those two are
# broken: every "{{" used to get a zero-width space, so an argument such as {{order_id}} copied
# from a card was not the one that ran.
_MACRO = re.compile(r"\{\{(?=(?:DATE|TIME)\()")


def safe(text: str) -> str:
    """Data for a ``TextRun``, as typed: no markdown is read there; only a date macro Teams
    would expand is broken (``{`` zero-width space ``{``)."""
    return _MACRO.sub("{\u200b{", text)


def _words(text: str, **style: Any) -> Json:
    """Our own words (never data): a wrapping TextBlock."""
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def data_line(*runs: tuple[str, bool], subtle: bool = False) -> Json:
    """A line of data: each run is (text, bold), shown verbatim.

    Any line holding a name, a value or a note goes here, never into a TextBlock: Teams reads a
    TextBlock as markdown, so a person named ``[Approve here](https://evil.example)`` became a
    live link on the "Waiting for … to decide" line.
    """
    inlines = [
        {
            "type": "TextRun",
            "text": safe(text),
            **({"weight": "Bolder"} if bold else {}),
            **({"isSubtle": True} if subtle else {}),
        }
        for text, bold in runs
        if text
    ]
    return {"type": "RichTextBlock", "inlines": inlines}


def _when(at: datetime) -> str:
    """A time every reader sees in their own zone (Teams expands DATE and TIME)."""
    stamp = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{{{{DATE({stamp}, SHORT)}}}} at {{{{TIME({stamp})}}}}"


def _detail(label: str, value: str) -> list[Json]:
    """One detail, whole and as typed; a time the engine wrote is shown in the reader's own
    zone, like the card's other times. Any other value is what the tool will be sent, so
    ``2026-05-01T10:15:59Z`` in an argument stays as written (``tools.engine_time``).

    DATE and TIME are expanded only in a TextBlock, so the time (our markup, built from digits
    alone) goes in one of its own right under its label, which stays a TextRun.
    """
    at = engine_time(value)
    if at is None:
        return [data_line((f"{label}: ", True), (value, False))]
    return [data_line((f"{label}:", True)), _words(_when(at), spacing="None")]


def _heading(spec: CardSpec) -> Json:
    # The heading names people ("Approval needed from …"): data, so a TextRun, never markdown.
    run = {"type": "TextRun", "text": safe(spec.title), "weight": "Bolder", "size": "Medium"}
    return {"type": "RichTextBlock", "inlines": [run]}


def _warning(text: str) -> Json:
    warn = data_line(("⚠ ", False), (text, False))
    return {"type": "Container", "style": "warning", "items": [warn]}


def _body(spec: CardSpec) -> list[Json]:
    body: list[Json] = [_heading(spec), data_line((spec.summary, True))]
    if spec.marked:
        body.append(_warning(words.MARKED))
    for label, value in spec.details:
        body += _detail(label, value)
    if spec.warning:
        body.append(_warning(spec.warning))
    return body


def _pending_lines(spec: CardSpec) -> list[Json]:
    # Whom the card waits for is its heading; a card that cannot name them says it here. The
    # approvals line of a card needing two names who approved: data, so a TextRun.
    lines = [] if spec.waiting_for else [data_line(("For ", False), ("the person who asked", True))]
    if spec.progress:
        lines.append(data_line((spec.progress, False)))
    if spec.expires_at is not None:
        lines.append(_words(f"Expires {_when(spec.expires_at)}", isSubtle=True, spacing="None"))
    return lines


def _decided_lines(spec: CardSpec) -> list[Json]:
    """Who decided and when, what that left standing, and what came of it.

    The note ("Nothing was changed; request 6 is still pending.") goes beside the who and the
    when, never instead of them, so a card that was not approved says by whom; each is said
    once.
    """
    lines: list[Json] = []
    decided, outcome = spec.decided, spec.outcome
    if decided is not None and not (decided.in_outcome and outcome):
        lines.append(data_line((f"{decided.verb} by ", False), (decided.by or "someone", True)))
    if spec.note is not None:
        lines.append(data_line((spec.note, False)))
    if outcome:
        label, text = outcome
        lines.append(data_line((f"{label}: " if label else "", True), (text, False)))
    if decided is not None and decided.at is not None:
        lines.append(_words(_when(decided.at), isSubtle=True, spacing="None"))
    return lines


def _data(spec: CardSpec, verb: str) -> Json:
    return press_data(spec.card_id, spec.token, verb)


def press_data(card: str, token: str, verb: str) -> Json:
    """What a press sends back: the card (or batch) id, its signed token and the verb."""
    return {"card": card, "token": token, "verb": verb}


def _execute(spec: CardSpec, verb: str, title: str, style: str, inputs: str) -> Json:
    return execute(spec.card_id, spec.token, verb, title, style, inputs)


def execute(card: str, token: str, verb: str, title: str, style: str, inputs: str) -> Json:  # noqa: PLR0917 - an action is these six things
    """An Action.Execute, falling back to Action.Submit (the same data) on older clients."""
    data = press_data(card, token, verb)
    fallback = {"type": "Action.Submit", "title": title, "style": style, "data": data}
    return {
        "type": "Action.Execute",
        "verb": verb,
        "title": title,
        "style": style,
        "data": data,
        "associatedInputs": inputs,
        "fallback": fallback,
    }


def _refresh(spec: CardSpec, issuee: str) -> Json:
    action = {
        "type": "Action.Execute",
        "verb": VERB_REFRESH,
        "title": "Refresh",
        "data": _data(spec, VERB_REFRESH),
    }
    return {"action": action, "userIds": [issuee][:_MAX_REFRESH_USERS]}


def reason_input(hint: str = words.REASON_HINT) -> Json:
    """The reason field beside Approve and Reject: read only when the press is a Reject;
    ``hint`` says who will see it."""
    return {
        "type": "Input.Text",
        "id": REASON_INPUT,
        "isMultiline": True,
        "maxLength": 500,
        "label": f"{words.REASON_LABEL} — used if you reject",
        "placeholder": hint,
    }


def _controls(spec: CardSpec, view: View) -> tuple[list[Json], list[Json]]:
    """The inputs and buttons of ``view``: Approve, Edit (when offered) and Reject (with a
    reason), or Withdraw; each labelled as the card words it ("Approve all 3")."""
    offered = {action.verb: action.label for action in spec.actions}
    if view == "asker":
        withdraw = _execute(spec, VERB_WITHDRAW, words.WITHDRAW, "default", "none")
        return [], [withdraw] if VERB_WITHDRAW in offered else []
    if view == "everyone" or not {VERB_APPROVE, VERB_REJECT} <= offered.keys():
        return [], []
    reason = reason_input(spec.reason_hint)
    # Edit turns the card into a form for its values (``bot.teams.editing``).
    edit = (
        [_execute(spec, VERB_EDIT, words.EDIT, "default", "none")] if VERB_EDIT in offered else []
    )
    actions = [
        _execute(spec, VERB_APPROVE, offered[VERB_APPROVE], "positive", "none"),
        *edit,
        _execute(spec, VERB_REJECT, offered[VERB_REJECT], "destructive", "auto"),
    ]
    return [reason], actions


def _card(spec: CardSpec, view: View, issuee: str | None, notice: str | None) -> Json:
    several = bool(spec.lines)
    body = _several_body(spec) if several else _body(spec)
    card: Json = {"type": "AdaptiveCard", "$schema": _SCHEMA, "version": "1.5"}
    if notice:
        alert = data_line((notice, False))
        body.insert(0, {"type": "Container", "style": "attention", "items": [alert]})
    if several:
        body += _several_tail(spec)
    elif not spec.is_pending:
        card["body"] = body + _decided_lines(spec)
        return card
    else:
        body += _pending_lines(spec)
    if spec.is_pending:
        inputs, actions = _controls(spec, view)
        body += inputs
        if actions:
            card["actions"] = actions
        if spec.token and issuee:
            card["refresh"] = _refresh(spec, issuee)
    card["body"] = body
    return card


_MARKS: Final = {"done": "✅ ", "failed": "❌ ", "executing": "⏳ "}


def _several_body(spec: CardSpec) -> list[Json]:
    """A card of several writes: its heading, what one press does, then a line per write
    (a ``TextRun``), its warning, and its outcome under it once decided."""
    body: list[Json] = [_heading(spec), data_line((spec.intro or "", False), subtle=True)]
    for number, line in enumerate(spec.lines, start=1):
        body.append(data_line((f"{number}. ", True), (line.summary, False)))
        for label, value in line.details:
            body += _detail(label, value)
        if line.warning:
            body.append(_warning(line.warning))
        if line.result:
            mark = _MARKS.get(line.status, "⛔ ")
            body.append(data_line((mark, False), (line.result, False), subtle=True))
    return body


def _several_tail(spec: CardSpec) -> list[Json]:
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


def card_bytes(card: Json) -> int:
    """The size Teams counts: the card's compact JSON in UTF-8."""
    return len(json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode())


def render(
    spec: CardSpec, *, view: View = "everyone", issuee: str | None = None, notice: str | None = None
) -> Json:
    """The Adaptive Card for ``spec`` as ``view`` sees it, within ``MAX_CARD_BYTES``.

    ``issuee`` is the Teams ``29:`` id whose client asks for its own view (the refresh); a card
    without one (a private copy, sent in its reader's view) has no refresh.
    ``notice`` is a refusal or a note shown above the card to the person who pressed.
    """
    card = _card(spec, view, issuee, notice)
    if card_bytes(card) <= MAX_CARD_BYTES:
        return card
    # Too big, which the engine refuses for a new card: one stored before it did is shown
    # as far as it fits and cannot be approved here. It used to lose details from the end
    # and keep Approve, which then sent what nobody saw.
    said = f"{notice} {words.TOO_LONG_HERE}" if notice else words.TOO_LONG_HERE
    details = spec.details
    while card_bytes(card) > MAX_CARD_BYTES and details:
        details = details[: len(details) // 2]
        hidden = len(spec.details) - len(details)
        trimmed = replace(
            spec, details=(*details, ("More", f"{hidden} more details not shown")), actions=()
        )
        card = _card(trimmed, view, None, said)
    return card


def notice_card(notice: str) -> Json:
    """A card holding only a notice, for a press on a card this person cannot be shown."""
    alert = {"type": "Container", "style": "attention", "items": [data_line((notice, False))]}
    return {"type": "AdaptiveCard", "$schema": _SCHEMA, "version": "1.5", "body": [alert]}
