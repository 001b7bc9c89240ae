"""Bad input at the HTTP edge: refused with 4xx (never 5xx), and nothing written or posted."""

from __future__ import annotations

import io
import itertools
import json
import random
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.sandbox import Message
from bot.sandbox import WebApi as FakeSlack
from bot.slack.blocks import EDIT_VIEW, REJECT_VIEW
from tests.reliability.harness import (
    SIGNING_SECRET,
    InProcessBot,
    count_rows,
    in_process_bot,
    press_payload,
    signed_form,
)
from tests.support.slack_requests import (
    block_action,
    command,
    event,
    form,
    message,
    signed,
    view_submission,
)
from tools import CardStatus
from tools.db import Database

JSON, FORM = "application/json", "application/x-www-form-urlencoded"


@pytest.fixture
async def bot(db: Database, slack: FakeSlack) -> AsyncIterator[InProcessBot]:
    async with in_process_bot(db, slack) as running:
        yield running


async def _card(bot: InProcessBot) -> Message:
    await bot.mention("UARJUN", "approve request 3")
    [card] = bot.cards()
    return card


async def _refused_quietly(bot: InProcessBot, body: str, content_type: str, **sign: int) -> int:
    """Sends one signed body; asserts it wrote nothing and made no Slack call; returns the status."""
    before, calls = await count_rows(bot.services.db), len(bot.slack.calls)
    headers = signed(body, SIGNING_SECRET, content_type=content_type, **sign)
    status = await bot.post(body.encode(), headers)
    await bot.settle()
    assert await count_rows(bot.services.db) == before
    # auth.test is bolt asking who it is (once per process); nothing else may be called.
    assert [c.method for c in bot.slack.calls[calls:] if c.method != "auth.test"] == []
    return status


async def test_bad_signature_on_a_genuine_press_is_401(bot: InProcessBot) -> None:
    """A genuine Approve press signed with another secret is 401 and the card stays pending."""
    card = await _card(bot)
    body, headers = signed_form(press_payload("UARJUN", card))
    headers = {**headers, **signed(body.decode(), "not-the-secret", content_type=FORM)}
    before = await count_rows(bot.services.db)
    assert await bot.post(body, headers) == 401
    await bot.settle()
    assert await count_rows(bot.services.db) == before
    assert [c.status for c in await bot.card_store.rows()] == [CardStatus.PENDING]


async def test_stale_timestamp_on_a_genuine_press_is_401(bot: InProcessBot) -> None:
    """A correctly signed press ten minutes old (a replay) is 401 and runs nothing."""
    card = await _card(bot)
    body = form(press_payload("UARJUN", card))
    assert await _refused_quietly(bot, body, FORM, timestamp=int(time.time()) - 600) == 401
    assert [c.status for c in await bot.card_store.rows()] == [CardStatus.PENDING]


_PRESS = block_action(
    "UARJUN", action_id="card_approve", value="x", block_id="b", channel="C0OPS", message_ts="1.1"
)
_COMMAND = command("UARJUN", "pending", channel="C0OPS", response_url="https://hooks.invalid/c")


def _modal(callback_id: str, metadata: str) -> dict[str, Any]:
    view = {"type": "modal", "callback_id": callback_id, "private_metadata": metadata}
    return view_submission("UARJUN", view, values={})


def _event(
    kind: str, without: str, *, channel: str = "C0OPS", channel_type: str = "channel"
) -> str:
    inner = message(
        "UARJUN",
        "<@UBOT> branches",
        channel=channel,
        ts="1.1",
        kind=kind,
        channel_type=channel_type,
    )
    return json.dumps(event({k: v for k, v in inner.items() if k != without}))


MALFORMED = {
    "broken JSON": ("{not json", JSON),
    "JSON array": ("[1, 2]", JSON),
    "JSON string": ('"hello"', JSON),
    "event that is a list": (json.dumps({"type": "event_callback", "event": [1]}), JSON),
    "form payload not JSON": ("payload=%7Bnope", FORM),
    "form payload a list": ("payload=%5B1%5D", FORM),
    "press without actions": (
        form({"type": "block_actions", "user": {"id": "UARJUN"}, "actions": []}),
        FORM,
    ),
    "view without a type": (
        form(
            {
                "type": "view_submission",
                "user": {"id": "UARJUN"},
                "view": {"callback_id": "card_reject_modal", "private_metadata": "{"},
            }
        ),
        FORM,
    ),
    # Signed, and shaped like Slack's, but missing what a listener reads: each answered 500.
    "press without a user": (
        form({k: v for k, v in _PRESS.items() if k != "user"}),
        FORM,
    ),
    "press by a user without an id": (form({**_PRESS, "user": {"name": "x"}}), FORM),
    "modal without a user": (
        form({k: v for k, v in _modal(REJECT_VIEW, "{}").items() if k != "user"}),
        FORM,
    ),
    "edit modal with broken metadata": (form(_modal(EDIT_VIEW, "{nope")), FORM),
    "reject modal with metadata a list": (form(_modal(REJECT_VIEW, "[1]")), FORM),
    "modal without its state": (
        form({**_modal(REJECT_VIEW, "{}"), "view": {"type": "modal", "callback_id": REJECT_VIEW}}),
        FORM,
    ),
    "mention without a ts": (_event("app_mention", "ts"), JSON),
    "DM without a ts": (_event("message", "ts", channel="D0ARJUN", channel_type="im"), JSON),
    "mention without a channel": (_event("app_mention", "channel"), JSON),
    "mention without a user": (_event("app_mention", "user"), JSON),
    "home opened without a user": (
        json.dumps(event({"type": "app_home_opened", "channel": "D0ARJUN", "tab": "home"})),
        JSON,
    ),
    "slash command without a user": (
        urlencode({k: v for k, v in _COMMAND.items() if k != "user_id"}),
        FORM,
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
async def test_malformed_body_is_400(bot: InProcessBot, case: str) -> None:
    """A signed body that is not Slack's shape is 400 (bolt answered these 500), nothing runs."""
    body, content_type = MALFORMED[case]
    assert await _refused_quietly(bot, body, content_type) == 400


UNKNOWN = {
    "unknown payload type": (json.dumps({"type": "made_up", "team_id": "T0FIESTA"}), JSON),
    "unknown interactive type": (form({"type": "made_up", "user": {"id": "UARJUN"}}), FORM),
    "unknown button": (
        form(
            {
                "type": "block_actions",
                "user": {"id": "UARJUN"},
                "team": {"id": "T0FIESTA"},
                "actions": [{"action_id": "launch_missiles", "block_id": "b", "value": "1"}],
            }
        ),
        FORM,
    ),
    "unknown event": (
        json.dumps(event(message("UARJUN", "hi", channel="C0OPS", ts="1.1", kind="star_added"))),
        JSON,
    ),
}


@pytest.mark.parametrize("case", list(UNKNOWN))
async def test_unknown_payload_is_4xx(bot: InProcessBot, case: str) -> None:
    """A signed payload no listener handles gets a 4xx, never a 5xx, and nothing runs."""
    body, content_type = UNKNOWN[case]
    assert 400 <= await _refused_quietly(bot, body, content_type) < 500


async def test_oversized_body_is_413(bot: InProcessBot) -> None:
    """A signed 3 MB body is refused with 413 before anything parses it."""
    body = json.dumps({"type": "event_callback", "padding": "x" * (3 * 1024 * 1024)})
    before = await count_rows(bot.services.db)
    headers = signed(body, SIGNING_SECRET, content_type=JSON)
    async with bot.http.post(
        bot.server.make_url("/slack/events"), data=io.BytesIO(body.encode()), headers=headers
    ) as response:
        assert response.status == 413
    assert await count_rows(bot.services.db) == before
    assert bot.slack.calls == []


def _mutations(token: str, count: int) -> list[str]:
    """Bit flips, truncations, splices, swapped parts and junk of a genuine token; never itself."""
    rng = random.Random(5)
    out: set[str] = set()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
    for attempt in itertools.count():
        if len(out) == count:
            break
        chars, kind = list(token), attempt % 5
        at = rng.randrange(len(token))
        if kind == 0:
            chars[at] = rng.choice(alphabet.replace(chars[at], ""))
        elif kind == 1:
            chars = chars[:at]
        elif kind == 2:
            del chars[at : at + rng.randint(1, 8)]
        elif kind == 3:
            parts = token.split(".")
            rng.shuffle(parts)
            chars = list(".".join(parts))
        else:
            chars = [rng.choice(alphabet) for _ in range(rng.randint(0, 300))]
        mutated = "".join(chars)
        if mutated != token:
            out.add(mutated)
    return sorted(out)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_mutated_tokens_over_http_are_refused(bot: InProcessBot) -> None:
    """300 mutated Approve values posted as signed presses: all acked 200, none accepted, each told why."""
    card = await _card(bot)
    genuine = press_payload("UARJUN", card)["actions"][0]["value"]
    tokens = _mutations(genuine, 300)
    for token in tokens:
        body, headers = signed_form(press_payload("UARJUN", card, value=token))
        assert await bot.post(body, headers) == 200
    await bot.settle()

    [record] = await bot.card_store.rows()
    assert record.status == CardStatus.PENDING
    told = bot.ephemerals("UARJUN")
    assert len(told) == len(tokens)
    assert all("not valid" in text for text in told), {t for t in told if "not valid" not in t}
    assert await bot.press("UARJUN", card) == 200
    assert [r.status for r in await bot.card_store.rows()] == [CardStatus.DONE]


TOO_LARGE = {
    "approve request 99999999999999999999": "The request number must be at most 2,147,483,647",
    "reject request 2147483648 because no": "The request number must be at most 2,147,483,647",
    "refund order 5 " + "9" * 400: "The amount must be at most 1,000,000,000,000",
    "set price of FF-MASALA-DOSA to 99999999999999999999": "The price must be at most",
    "approve request " + "9" * 5000: "The request number is too large",
}


@pytest.mark.parametrize("words", list(TOO_LARGE), ids=lambda words: words[:40])
async def test_numbers_too_large_are_answered_in_words(bot: InProcessBot, words: str) -> None:
    """A mention with an id, amount or price beyond what its column holds is answered with the
    bound and makes no card; each ended the turn in a traceback ("something went wrong"), and a
    price PostgreSQL could not store made a card that could only fail."""
    ts = await bot.mention("UPRIYA", words)
    answers = [m.text for m in bot.slack.messages if m.thread_ts == ts and not m.ephemeral_to]
    assert any(TOO_LARGE[words] in text for text in answers), answers
    assert not any("went wrong" in text for text in answers)
    assert bot.cards() == []


def _typed_amount(value: str) -> dict[str, Any]:
    """The Edit modal's state as Slack sends it, with ``value`` typed as the amount."""
    return {
        "edit_amount": {"value": {"type": "plain_text_input", "value": value}},
        "edit_reason": {"value": {"type": "plain_text_input", "value": None}},
    }


@pytest.mark.parametrize("typed", ["1e400", "9" * 400])
async def test_an_amount_too_large_in_the_edit_modal_is_answered_in_it(
    bot: InProcessBot, typed: str
) -> None:
    """An amount beyond what money can hold, typed into the Edit modal, comes back as the
    modal's error with the bound, and the card stays; "1e400" answered 500, as babel could not
    format it for the refusal."""
    await bot.mention("UARJUN", "refund order 5 100")
    [card] = bot.cards()
    assert await bot.post(*signed_form(press_payload("UARJUN", card, action="card_edit"))) == 200
    await bot.settle()
    [opened] = bot.slack.called("views.open")
    body, headers = signed_form(
        view_submission("UARJUN", opened["view"], values=_typed_amount(typed))
    )
    async with bot.http.post(
        bot.server.make_url("/slack/events"), data=body, headers=headers
    ) as response:
        assert response.status == 200
        answer = await response.json()
    assert answer["response_action"] == "errors"
    assert "The amount must be at most 1,000,000,000,000" in answer["errors"]["edit_amount"]
    await bot.settle()
    assert [c.status for c in await bot.card_store.rows()] == [CardStatus.PENDING]


@pytest.mark.parametrize(("word", "said"), [("9" * 5000, "No cards"), ("²", "/countersign help")])
async def test_pending_with_any_number_is_answered(bot: InProcessBot, word: str, said: str) -> None:
    """`/countersign pending <n>` is answered whatever n is: past the last card it lists from
    the last, and what is not a number gets the help. 5,000 digits (which int() refuses) or
    "²" (a digit to str.isdigit, not to int()) ended the command's work in a traceback, and
    the person got no answer at all."""
    url = bot.slack.response_url()
    body = urlencode(command("UARJUN", f"pending {word}", channel="C0OPS", response_url=url))
    assert await bot.post(body.encode(), signed(body, SIGNING_SECRET, content_type=FORM)) == 200
    await bot.settle()
    [answer] = bot.slack.responses
    assert said in answer["text"]
