"""The "Not done yet" answer above a Teams card says what became of the card once it is decided."""

from __future__ import annotations

from tests.support.fake_connector import Call
from tests.support.teams_activities import CHANNEL
from tests.teams.conftest import ARJUN, TeamsBot

CHAT = f"a:1{ARJUN.aad}-personal"  # Arjun's 1:1 chat with the bot


def _edits_of(bot: TeamsBot, message: str) -> list[str]:
    """The words each update of the message ``message`` gave it, in order."""
    return [str(c.body.get("text")) for c in bot.connector.edits() if c.activity_id == message]


def _answer(bot: TeamsBot, conversation: str) -> Call:
    """The message that said "Not done yet" in ``conversation`` (a stream's final, or a post)."""
    [said] = [
        c
        for c in bot.connector.messages()
        if c.conversation == conversation
        and str(c.body.get("text") or "").startswith("Not done yet")
        and (c.stream is None or c.stream.get("streamType") == "final")
    ]
    return said


async def test_the_answer_above_an_approved_channel_card_says_done(teams: TeamsBot) -> None:
    """Arjun's channel answer "Not done yet: it is waiting for your approval on the card below."
    is edited, once he approves, to "Done: see the card below."."""
    card = await teams.card_for(ARJUN)
    answer = _answer(teams, CHANNEL)
    status, _ = await teams.press(ARJUN, "approve", card)
    assert status == 200
    assert _edits_of(teams, str(answer.created)) == ["Done: see the card below."]


async def test_a_streamed_answer_above_a_rejected_card_says_not_approved(
    streaming: TeamsBot,
) -> None:
    """In Arjun's 1:1 chat the streamed answer above the card he declined reads that it was
    not approved and nothing was changed."""
    streaming.services.typing_after = 60.0
    streaming.connector.chats[ARJUN.aad] = CHAT
    assert await streaming.say(ARJUN, "approve request 3", conversation=CHAT, personal=True) == 202
    answer = _answer(streaming, CHAT)
    assert answer.stream is not None
    [card] = [c for c in streaming.connector.card_posts() if c.conversation == CHAT]
    status, _ = await streaming.press(ARJUN, "reject", card, reason="later", personal=True)
    assert status == 200
    assert _edits_of(streaming, str(answer.stream["streamId"])) == [
        "Not done: it was not approved, so nothing was changed. See the card below."
    ]


def _placeholder(card: dict[str, object]) -> str:
    """The reason field's hint on an Adaptive Card."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "Input.Text" and "placeholder" in node:
                found.append(str(node["placeholder"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(card)
    [hint] = found
    return hint


async def test_the_reason_hint_in_a_chat_names_no_channel(teams: TeamsBot) -> None:
    """In Arjun's 1:1 chat the reason field said "The assistant and the channel will see it";
    there is no channel there, and it says who will see it; a channel's card still names it."""
    teams.connector.chats[ARJUN.aad] = CHAT
    assert await teams.say(ARJUN, "approve request 3", conversation=CHAT, personal=True) == 202
    [card] = [c for c in teams.connector.card_posts() if c.conversation == CHAT]
    mine = await teams.refresh(ARJUN, card, personal=True)
    assert _placeholder(mine) == (
        "Leave it empty to reject without one. The assistant and the person who asked will see it."
    )
    channel = await teams.card_for(ARJUN, "approve request 2")
    theirs = await teams.refresh(ARJUN, channel)
    assert _placeholder(theirs).endswith("The assistant and the channel will see it.")
