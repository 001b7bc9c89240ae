"""The "Not done yet" reply above a card says what became of the card once it is decided."""

from __future__ import annotations

from bot.cards.answered import Answer, settled_answer
from bot.sandbox import Message
from bot.sandbox.payloads import message
from tests.slack.conftest import CHANNEL, DM, Bot
from tests.support.slack_requests import view_submission


def _replies(bot: Bot, channel: str) -> list[Message]:
    """The bot's words in ``channel`` that are neither a card nor an audit line."""
    return [
        m
        for m in bot.slack.messages
        if m.channel == channel
        and m.user == bot.slack.bot_user_id
        and not any(b.get("type") == "actions" for b in m.blocks)
        and not m.reply_broadcast
        and m.ephemeral_to is None
    ]


async def test_the_reply_above_an_approved_card_says_done(bot: Bot) -> None:
    """Arjun's "approve request 3" answer read "Not done yet: it is waiting for your approval
    on the card below." long after he approved; once he does, it reads "Done: see the card below."."""
    await bot.mention("UARJUN", "approve request 3")
    [reply] = [m for m in _replies(bot, CHANNEL) if m.text.startswith("Not done yet")]
    [card] = bot.cards()
    await bot.press("UARJUN", card)
    assert bot.slack.message(CHANNEL, reply.ts).text == "Done: see the card below."
    assert not [m for m in bot.slack.messages if "Not done yet" in m.text]


async def test_the_reply_above_a_declined_card_in_a_dm_says_what_became_of_it(bot: Bot) -> None:
    """In Arjun's DM the answer above the card he declined reads that it was not approved and
    nothing was changed, no longer that it waits for his approval."""
    await bot.send(
        message("UARJUN", "approve request 3", channel=DM, ts=bot.ts(), channel_type="im")
    )
    [reply] = [m for m in _replies(bot, DM) if m.text.startswith("Not done yet")]
    [card] = bot.cards(DM)
    await bot.press("UARJUN", card, action="card_reject")
    view = bot.slack.called("views.open")[0]["view"]
    await bot.interact(view_submission("UARJUN", view, reason="not this week"))
    assert bot.slack.message(DM, reply.ts).text == (
        "Not done: it was not approved, so nothing was changed. See the card below."
    )


async def test_the_reply_waits_with_a_card_of_two_approvals_then_says_done(bot: Bot) -> None:
    """Ravi's ₹42,000 card: after Arjun's first of two approvals its answer still says it is
    not done; after Meera's second it reads "Done: see the card below."."""
    await bot.mention("URAVI", "approve request 5")
    [reply] = [m for m in _replies(bot, CHANNEL) if m.text.startswith("Not done yet")]
    before = reply.text
    copies = {user: bot.cards(bot.dm(user))[0] for user in ("UARJUN", "UMEERA")}
    await bot.press("UARJUN", copies["UARJUN"])
    assert bot.slack.message(CHANNEL, reply.ts).text == before
    await bot.press("UMEERA", copies["UMEERA"])
    assert bot.slack.message(CHANNEL, reply.ts).text == "Done: see the card below."


async def test_the_reply_above_a_card_of_several_says_done_once_all_are(bot: Bot) -> None:
    """ "approve requests 2 and 3" answers above one card of both; once Arjun approves it the
    answer reads "Done: see the card below."."""
    await bot.mention("UARJUN", "approve requests 2 and 3")
    [reply] = [m for m in _replies(bot, CHANNEL) if m.text.startswith("Not done yet")]
    [card] = bot.cards()
    await bot.press("UARJUN", card)
    assert bot.slack.message(CHANNEL, reply.ts).text == "Done: see the card below."


def test_a_models_own_words_stay_under_the_new_first_line() -> None:
    """An answer in the model's own words ("Nandi Dairy is owed …; press Approve") keeps them
    under what became of the card; the product's "Not done yet" line alone is replaced."""
    answer = Answer.of("1.2", "Nandi Dairy is owed ₹32,140.50. Press Approve to pay it.")
    assert answer is not None and answer.said.startswith("Nandi Dairy")
    assert settled_answer(["done"], answer.said) == (
        "Done: see the card below.\n\nNandi Dairy is owed ₹32,140.50. Press Approve to pay it."
    )
    assert Answer.of("1.3", "Not done yet: it is waiting…") == Answer("1.3", "")
    assert settled_answer(["done", "pending"]) is None
    assert settled_answer(["done", "failed"]) == "Decided: the card below says what became of each."
