"""The consent card of an agent connecting by OAuth, in a Teams person's 1:1 chat, pressed over /api/messages."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.slack.test_mcp_oauth import (
    REDIRECT,
    _ask,
    _base,
    _outcome,
    _pkce,
    _register,
)
from tests.support.fake_connector import Call, Member
from tests.support.teams_activities import invoke
from tests.teams.conftest import ARJUN, MEERA, TeamsBot
from tests.teams.test_mcp_chats import chat_id, fiesta_in_teams_only, writes_in_chat

pytestmark = pytest.mark.slow

Json = dict[str, Any]


def _consents(bot: TeamsBot) -> list[Call]:
    return [
        c
        for c in bot.connector.card_posts()
        if any(a.get("verb") == "consent_allow" for a in c.cards[0].get("actions", []))
    ]


def _said(card: Json) -> str:
    """Every text run a card shows, in order, one line each."""
    runs: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "TextRun":
                runs.append(str(node["text"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(card.get("body"))
    return "\n".join(runs)


async def _start(bot: TeamsBot) -> str:
    client_id = await _register(bot)  # type: ignore[arg-type]
    _, challenge = _pkce()
    query = {
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
        "code_challenge": challenge, "state": "t", "resource": f"{_base(bot)}/mcp",  # type: ignore[arg-type]
    }  # fmt: skip
    async with bot.http.get(
        bot.server.make_url("/authorize"), params=query, allow_redirects=False
    ) as r:
        assert r.status == 302, await r.text()
        handle = parse_qs(urlsplit(r.headers["Location"]).query)["request"][0]
    await _ask(bot, handle, "arjun@fiesta.example")  # type: ignore[arg-type]
    return handle


async def _press(bot: TeamsBot, member: Member, card: Call, verb: str) -> Json:
    allow = next(a for a in card.cards[0]["actions"] if a["verb"] == verb)
    activity = invoke(
        member, verb, allow["data"], service_url=bot.connector.url,
        reply_to=str(card.created), conversation=card.conversation, personal=True,
    )  # fmt: skip
    status, body = await bot.post(activity)
    assert status == 200, body
    return dict(body)


async def test_a_teams_person_allows_in_their_own_chat(teams: TeamsBot) -> None:
    """Arjun, in Teams only, who has written to the bot: the card comes to his 1:1 chat
    naming the client, its host, Fiesta Foods and the code; Allow answers on the card and
    sends the page on with a code."""
    await fiesta_in_teams_only(teams)
    await writes_in_chat(teams, ARJUN)
    handle = await _start(teams)
    [card] = _consents(teams)
    assert card.conversation == chat_id(ARJUN)
    text = _said(card.cards[0])
    for needle in ("Claude", "claude.ai", "Fiesta Foods", "wait for a countersignature"):
        assert needle in text, text
    answered = await _press(teams, ARJUN, card, "consent_allow")
    assert "You allowed Claude" in _said(answered["value"])
    redirect = (await _outcome(teams, handle))["redirect"]  # type: ignore[arg-type]
    assert "code=" in redirect


async def test_someone_else_in_teams_cannot_answer_arjuns_card(teams: TeamsBot) -> None:
    """Meera (linked, having written to the bot herself) pressing Allow with Arjun's card's
    value answers nothing, and the page still waits."""
    await fiesta_in_teams_only(teams)
    await writes_in_chat(teams, ARJUN)
    await writes_in_chat(teams, MEERA)
    handle = await _start(teams)
    [card] = _consents(teams)
    answered = await _press(teams, MEERA, card, "consent_allow")
    assert "no longer waiting" in _said(answered["value"])
    assert (await _outcome(teams, handle)) == {"status": "waiting"}  # type: ignore[arg-type]


async def test_no_chat_kept_no_card_and_the_same_page(teams: TeamsBot) -> None:
    """A Teams person who never wrote to the bot has no 1:1 chat to reach: no card is sent
    (Teams opens none for a request with no service URL), and the page is the same."""
    await fiesta_in_teams_only(teams)
    await _start(teams)
    assert _consents(teams) == []
