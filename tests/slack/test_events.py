"""Events: mentions, DMs, thread follow-ups, retries and duplicates, bots, strangers, model failures."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.adapter import Steps, Stream
from bot.services import ModelReply
from tests.slack.conftest import CHANNEL, DM, Bot
from tests.support.slack_requests import message
from tools import Caller

# A safety net so a broken indicator fails the test instead of hanging it; nothing is timed.
_NEVER = 60.0


def replies(bot: Bot, channel: str, thread: str | None) -> list[str]:
    return [
        m.text
        for m in bot.slack.messages
        if m.channel == channel
        and m.thread_ts == thread
        and m.user == "UBOT"
        and not m.ephemeral_to
    ]


async def test_mention_is_answered_in_a_thread_under_it(bot: Bot) -> None:
    """An @mention in a channel gets its answer as a thread reply under the message."""
    thread = await bot.mention("UARJUN", "pending requests")
    answers = replies(bot, CHANNEL, thread)
    assert len(answers) == 1
    assert "request" in answers[0].lower()
    posted = bot.slack.called("chat.postMessage")[-1]
    assert posted["thread_ts"] == thread
    assert posted["parse"] == "none"
    assert posted["unfurl_links"] is False


async def test_quick_answer_gets_no_working_reaction(bot: Bot) -> None:
    """An answer posted within the typing delay is just posted: no hourglass put on and taken off."""
    bot.services.typing_after = 3600.0  # no machine is slow enough to reach it
    thread = await bot.mention("UARJUN", "branches")
    assert len(replies(bot, CHANNEL, thread)) == 1
    assert bot.slack.called("reactions.add") == []
    assert bot.slack.called("reactions.remove") == []


def reactions_added(bot: Bot, count: int) -> asyncio.Event:
    """Set once the fake Slack has put ``count`` reactions on (a wait, not a timer)."""
    done = asyncio.Event()
    add = bot.slack._reactions_add

    async def added(params: dict[str, Any]) -> dict[str, Any]:
        answer = await add(params)
        if len(bot.slack.called("reactions.add")) >= count:
            done.set()
        return answer

    bot.slack._reactions_add = added  # type: ignore[method-assign]
    return done


class SlowModel:
    """Answers only once the message wears its hourglass: a model slower than the typing delay."""

    def __init__(self, bot: Bot) -> None:
        self.inner, self.shown = bot.assistant, reactions_added(bot, 1)

    async def reply(
        self,
        *,
        conversation: str,
        caller: Caller,
        text: str,
        steps: Steps | None = None,
        stream: Stream | None = None,
    ) -> ModelReply:
        async with asyncio.timeout(_NEVER):
            await self.shown.wait()
        return await self.inner.reply(
            conversation=conversation, caller=caller, text=text, steps=steps, stream=stream
        )

    async def record(self, *, conversation: str, text: str) -> None:
        await self.inner.record(conversation=conversation, text=text)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_slow_answer_wears_a_working_reaction_until_posted(bot: Bot) -> None:
    """A message not answered within the typing delay wears an hourglass, taken off before the answer."""
    bot.services.typing_after = 0.05
    bot.services.assistant = SlowModel(bot)
    thread = await bot.mention("UARJUN", "branches")
    added = bot.slack.called("reactions.add")
    removed = bot.slack.called("reactions.remove")
    assert [(c["timestamp"], c["name"]) for c in added] == [(thread, "hourglass_flowing_sand")]
    assert [(c["timestamp"], c["name"]) for c in removed] == [(thread, "hourglass_flowing_sand")]
    assert bot.slack.message(CHANNEL, thread).reactions == set()
    assert len(replies(bot, CHANNEL, thread)) == 1
    order = [c.method for c in bot.slack.calls if c.method != "auth.test"]
    assert order.index("reactions.remove") < order.index("chat.postMessage")


async def test_direct_message_is_answered(bot: Bot) -> None:
    """Every DM is answered, with no mention needed."""
    ts = bot.ts()
    await bot.send(message("UARJUN", "branches", channel=DM, ts=ts, channel_type="im"))
    answers = replies(bot, DM, None)
    assert len(answers) == 1
    assert "Indiranagar" in answers[0]


async def test_thread_follow_up_needs_no_mention(bot: Bot) -> None:
    """A reply in a thread the bot is part of is answered without a new mention."""
    thread = await bot.mention("UARJUN", "branches")
    await bot.send(
        message("UARJUN", "pending requests", channel=CHANNEL, ts=bot.ts(), thread_ts=thread)
    )
    assert len(replies(bot, CHANNEL, thread)) == 2


async def test_thread_without_the_bot_is_left_alone(bot: Bot) -> None:
    """People talking in a thread the bot never joined are not interrupted."""
    root = bot.ts()
    await bot.send(message("UARJUN", "lunch?", channel=CHANNEL, ts=bot.ts(), thread_ts=root))
    await bot.send(message("UMEERA", "sure", channel=CHANNEL, ts=bot.ts()))
    assert bot.slack.called("chat.postMessage") == []


async def test_retried_event_is_answered_once(bot: Bot) -> None:
    """Slack retrying one event three times (same event_id) produces one answer."""
    ts = bot.ts()
    inner = message("UARJUN", "<@UBOT> branches", channel=CHANNEL, ts=ts, kind="app_mention")
    for attempt in range(4):
        retry = (
            {"X-Slack-Retry-Num": str(attempt), "X-Slack-Retry-Reason": "http_timeout"}
            if attempt
            else {}
        )
        assert await bot.send(inner, event_id="EvRETRIED", headers=retry) == 200
    assert len(replies(bot, CHANNEL, ts)) == 1


async def test_mention_delivered_twice_is_answered_once(bot: Bot) -> None:
    """A mention in a thread arrives as app_mention and as message.channels; one answer."""
    thread = await bot.mention("UARJUN", "branches")
    ts = bot.ts()
    text = "<@UBOT> pending requests"
    await bot.send(message("UARJUN", text, channel=CHANNEL, ts=ts, thread_ts=thread))
    await bot.send(
        message("UARJUN", text, channel=CHANNEL, ts=ts, thread_ts=thread, kind="app_mention")
    )
    assert len(replies(bot, CHANNEL, thread)) == 2


async def test_bot_messages_are_ignored(bot: Bot) -> None:
    """Another bot's messages, even in the bot's own thread or a DM, get no answer (no loops)."""
    thread = await bot.mention("UARJUN", "branches")
    before = len(bot.slack.called("chat.postMessage"))
    await bot.send(
        message(
            "UOTHERBOT",
            "branches",
            channel=CHANNEL,
            ts=bot.ts(),
            thread_ts=thread,
            bot_id="B0OTHER",
            subtype="bot_message",
        )
    )
    await bot.send(
        message(
            "UOTHERBOT", "branches", channel=DM, ts=bot.ts(), channel_type="im", bot_id="B0OTHER"
        )
    )
    assert len(bot.slack.called("chat.postMessage")) == before


async def test_own_messages_are_ignored(bot: Bot) -> None:
    """The bot's own message echoed back as an event is not answered."""
    thread = await bot.mention("UARJUN", "branches")
    before = len(bot.slack.called("chat.postMessage"))
    await bot.send(
        message(
            "UBOT",
            "Here are the branches",
            channel=CHANNEL,
            ts=bot.ts(),
            thread_ts=thread,
            bot_id="BBOT",
        )
    )
    assert len(bot.slack.called("chat.postMessage")) == before


async def test_edits_and_unknown_events_do_not_404(bot: Bot) -> None:
    """Subscribed events the bot does not act on are acknowledged, so Slack does not retry them."""
    edited = {
        "type": "message",
        "subtype": "message_changed",
        "channel": CHANNEL,
        "ts": bot.ts(),
        "channel_type": "channel",
        "message": {"text": "x"},
    }
    assert await bot.send(edited) == 200
    assert await bot.send({"type": "app_uninstalled"}) == 200
    assert bot.slack.called("chat.postMessage") == []


async def test_unknown_person_gets_a_polite_message_and_no_data(bot: Bot) -> None:
    """Someone whose email is nobody's in Countersign is told how to get access, and sees nothing."""
    thread = await bot.mention("USTRANGER", "pending requests")
    answers = replies(bot, CHANNEL, thread)
    assert len(answers) == 1
    assert "don't know who you are" in answers[0]
    assert "request" not in answers[0].lower().replace("requests", "")
    assert bot.slack.called("reactions.add") == []


async def test_first_contact_links_by_verified_email(bot: Bot) -> None:
    """A person not yet linked is linked by the email users.info returns, then answered."""
    bot.slack.add_user("UNEWPRIYA", "Priya (new account)", "Priya@Fiesta.example")
    thread = await bot.mention("UNEWPRIYA", "branches")
    assert [c["user"] for c in bot.slack.called("users.info")] == ["UNEWPRIYA"]
    assert "Indiranagar" in replies(bot, CHANNEL, thread)[0]
    linked = await bot.services.directory.resolve("slack", "T0FIESTA", "UNEWPRIYA")
    assert linked is not None and linked.userid == 1


async def test_channel_ping_in_data_pings_nobody(bot: Bot) -> None:
    """A message that would echo `<!channel>` reaches Slack escaped, so nobody is pinged."""
    ts = bot.ts()
    await bot.send(
        message("UARJUN", "<!channel> & <@UMEERA>", channel=DM, ts=ts, channel_type="im")
    )
    for posted in bot.slack.called("chat.postMessage"):
        assert "<!channel>" not in posted["text"]
        assert "<@UMEERA>" not in posted["text"]


async def test_model_failure_becomes_a_polite_message(bot: Bot) -> None:
    """When the model blows up the thread gets an apology and the next message still works."""

    async def broken(**_: object) -> None:
        raise RuntimeError("model endpoint unreachable")

    original = bot.assistant.reply
    bot.assistant.reply = broken  # type: ignore[method-assign,assignment]
    thread = await bot.mention("UARJUN", "branches")
    assert "couldn't answer" in replies(bot, CHANNEL, thread)[0]
    bot.assistant.reply = original  # type: ignore[method-assign]
    await bot.send(message("UARJUN", "branches", channel=CHANNEL, ts=bot.ts(), thread_ts=thread))
    assert "Indiranagar" in replies(bot, CHANNEL, thread)[1]
