"""Draws a card, of one write or several, as the Slack message a copy shows; never calls Slack.

The one renderer of a card's message: ``render`` draws any ``CardSpec`` (a card waiting, a
decided one, or one of several writes: a header, the line saying what one press does, one
section per write with its outcome once decided, the lines under them and one actions block),
and ``card_message`` draws a ``Card`` as one of its copies shows it now. Twenty writes make at
most 26 blocks, well inside Slack's 50; every section stays short enough to read on a phone.
The parts (sections, fields, buttons) are ``bot.slack.blocks``'.
"""

from __future__ import annotations

from typing import Final

from bot.cards.card import Card
from bot.cards.cardspec import CardSpec, Verb
from bot.slack import rich, texts
from bot.slack.blocks import (
    DECIDING,
    EVERY,
    WITHDRAWING,
    Block,
    buttons,
    context,
    head,
    render_decided,
    render_pending,
    rich_text,
)
from bot.slack.rich import Line

__all__ = ["card_message", "copy_verbs", "render"]

_MARKS: Final = {"done": "white_check_mark", "failed": "x", "executing": "hourglass_flowing_sand"}
_LINE: Final = 2000


def copy_verbs(*, private: bool, approved: bool) -> frozenset[Verb]:
    """The buttons of a copy: every one on a thread's card; on a private copy, Approve, Edit and
    Reject for its one reader, and none once that reader gave the first of two approvals. A
    card in its asker's DM, read by them alone, keeps only Withdraw once they approved."""
    if not private:
        return WITHDRAWING if approved else EVERY
    return frozenset() if approved else DECIDING


def render(
    spec: CardSpec,
    *,
    for_user: str | None,
    verbs: frozenset[Verb] = EVERY,
    reader_approves: bool = False,
) -> list[Block]:
    """Any card as Block Kit: one of several writes, one waiting, or one decided.

    ``reader_approves``: the copy has one reader, who may approve it (their Approve opens its
    dialog); a channel's copy has none (``bot.slack.blocks._confirm``).
    """
    if spec.lines:
        return _several(spec, verbs, reader_approves=reader_approves)
    if spec.is_pending:
        return render_pending(spec, for_user=for_user, verbs=verbs, reader_approves=reader_approves)
    return render_decided(spec, decided_by_slack=None)


def card_message(
    card: Card,
    *,
    token: str,
    for_user: str | None,
    private: bool,
    approved: bool = False,
    reader_approves: bool = False,
) -> tuple[str, list[Block]]:
    """The notification text and blocks of a card's copy as the card stands now.

    A card still pending after a first of two approvals, or after an escalation widened whom
    it waits for, keeps its buttons (``token``, the copy's own signed card); it is never drawn
    as decided. A ``private`` copy is only ever seen by someone the card is issued to, so it
    shows Approve and Reject alone, and none once its reader ``approved`` (the first of two).
    A settled card names who decided by name: the Slack user a copy was posted for is not
    necessarily who decided it.
    """
    record = card.single
    if record is not None and not card.live:
        text = texts.decided_text(
            str(record.status), record.summary, record.decided_by_name or "", record.standing
        )
        return text, render(card.spec(), for_user=None)
    spec = card.spec(token=token)
    verbs = copy_verbs(private=private, approved=approved)
    # A private copy goes only to someone the card is issued to.
    drawn = render(spec, for_user=for_user, verbs=verbs, reader_approves=private or reader_approves)
    return texts.notification(spec.notification), drawn


def _line(number: int, spec: CardSpec, index: int) -> Block:
    """One write of several, as typed: its sentence, what it sends beyond it, its warning, its
    outcome once decided."""
    line = spec.lines[index]
    said = [rich.line(rich.bold(f"{number}. "), rich.words(line.summary, limit=_LINE))]
    # Whole and literal, as on a card of one: it is what the write will be sent.
    said += [
        rich.line(rich.literal(f"{label}: ", strong=True), rich.value(value))
        for label, value in line.details
    ]
    if line.warning:
        said.append(rich.line(rich.emoji("warning"), " ", rich.words(line.warning, limit=_LINE)))
    if line.result:
        mark = rich.emoji(_MARKS.get(line.status, "no_entry_sign"))
        said.append(rich.line(mark, " ", rich.words(line.result, limit=_LINE)))
    return rich_text(said, "text")


def _several(spec: CardSpec, verbs: frozenset[Verb], *, reader_approves: bool) -> list[Block]:
    """A card of several writes: heading, what one press does, a section per write, then the
    lines under it and the buttons among ``verbs`` (none once settled)."""
    blocks: list[Block] = [head(spec), context(spec.intro or "")]
    blocks += [_line(n, spec, n - 1) for n in range(1, len(spec.lines) + 1)]
    tail: list[Line] = []
    if spec.progress:
        tail.append(texts.progress(spec.progress))
    if spec.decided is not None and not spec.is_pending:
        tail.append(
            texts.decided_line(spec.decided.by, None, spec.decided.at, verb=spec.decided.verb)
        )
    if spec.reason:
        tail.append(texts.outcome_line("Reason", spec.reason))
    if tail:
        blocks.append(rich_text(tail, "ctx"))
    if spec.is_pending and spec.expires_at:
        blocks.append(context(texts.card_for(None, spec.expires_at)))
    return [*blocks, *buttons(spec, verbs, reader_approves=reader_approves)]
