"""One card for several writes of one turn: one Approve, each write run once and on its own."""

from __future__ import annotations

import asyncio
import copy
from collections import Counter
from datetime import timedelta

from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import select, update

from bot.presses import sweeps
from bot.sandbox import BOT_TOKEN, Message
from bot.sandbox.payloads import TEAM
from bot.slack.adapter import SlackAdapter, Where
from bot.turns.posting import post_turn_cards
from tests.slack.conftest import (
    CHANNEL,
    Bot,
    approve_modals,
    buttons,
    modal_said,
    request_status,
    said,
    validate,
)
from tests.support.slack_requests import view_submission
from tools import CardStatus
from tools.db import AuditRow
from tools.errors import ConflictError
from tools.toolsets.merchant.models import BranchRequest


def approve_button(card: Message) -> dict[str, object]:
    block = next(b for b in card.blocks if b["type"] == "actions")
    return dict(next(e for e in block["elements"] if e["action_id"] == "card_approve"))


async def cards_of(bot: Bot, *request_ids: int) -> dict[int, str]:
    """The card id proposed for each request (the newest), read from the proposals table."""
    found: dict[int, str] = {}
    for card in await bot.card_store.rows():
        request = card.args.get("request_id")
        if request in request_ids and card.status == "pending":
            found[int(request)] = card.id
    return found


async def outcomes(bot: Bot, card_ids: list[str]) -> Counter[tuple[str, str]]:
    """How many of each (card, outcome) audit line there are for these cards."""
    async with bot.services.db.session() as session:
        rows = await session.execute(
            select(AuditRow.card_id, AuditRow.outcome).where(AuditRow.card_id.in_(card_ids))
        )
    return Counter((str(r.card_id), str(r.outcome)) for r in rows)


def broadcasts(bot: Bot) -> list[str]:
    return [m.text for m in bot.slack.messages if m.channel == CHANNEL and m.reply_broadcast]


async def test_several_writes_of_one_turn_are_one_card(bot: Bot) -> None:
    """ "approve requests 1, 2 and 3" posts one card listing each request with its ids and
    names, one "Approve all 3" (its confirm asked when pressed), Reject and Withdraw; within
    Slack's limits."""
    await bot.mention("UARJUN", "approve requests 1, 2 and 3")
    [card] = bot.cards()
    validate(card.blocks)
    text = said(card.blocks)
    for number in (1, 2, 3):
        assert f"Approve request {number} — " in text, text
    assert "(branch " in text and "asked by " in text
    assert buttons(card.blocks) == ["card_approve", "card_reject", "card_withdraw"]
    approve = approve_button(card)
    assert approve["text"] == {"type": "plain_text", "text": "Approve all 3", "emoji": True}
    assert "confirm" not in approve and len(str(approve["value"])) < 2000
    assert card.blocks[0]["text"]["text"] == "Approval needed from Arjun Mehta"
    cards = await cards_of(bot, 1, 2, 3)
    records = [await bot.registry.card(cid) for cid in cards.values()]
    assert len({r.batch_id for r in records if r is not None}) == 1
    # The cards' own tokens never reach a button: only the batch's.
    assert all(r is not None and r.batch_id for r in records)


async def test_a_write_that_can_no_longer_run_fails_alone(bot: Bot) -> None:
    """Request 2 decided meanwhile: approving the batch runs 1 and 3, fails 2 with the reason
    in plain words, and the channel gets one line with each outcome."""
    await bot.mention("UARJUN", "approve requests 1, 2 and 3")
    [card] = bot.cards()
    async with bot.services.db.session(write=True) as session:
        await session.execute(
            update(BranchRequest)
            .where(BranchRequest.id == 2)
            .values(status="approved", decided_by=None, decided_at=bot.clock())
        )
        await session.commit()
    assert await bot.press("UARJUN", card) == 200
    assert [await request_status(bot, n) for n in (1, 2, 3)] == ["approved", "approved", "approved"]
    shown = bot.shown(card)
    validate(shown.blocks)
    assert shown.blocks[0]["text"]["text"] == "Approved: 2 done, 1 failed"
    text = said(shown.blocks)
    assert "Failed: Request 2 was already approved" in text, text
    assert text.count("Done") == 2 and buttons(shown.blocks) == []
    [line] = broadcasts(bot)
    assert "Approved: 2 done, 1 failed (Arjun Mehta)" in line
    assert "Approve request 2" in line and "Failed" in line


async def test_two_presses_at_once_run_each_write_once(bot: Bot) -> None:
    """A double tap (two presses at the same moment) approves each request exactly once:
    one "done" line per card in the audit log, one line for the channel."""
    await bot.mention("UARJUN", "approve requests 1, 2 and 3")
    [card] = bot.cards()
    cards = await cards_of(bot, 1, 2, 3)
    await asyncio.gather(bot.press("UARJUN", card), bot.press("UARJUN", card))
    assert [await request_status(bot, n) for n in (1, 2, 3)] == ["approved"] * 3
    counted = await outcomes(bot, list(cards.values()))
    for cid in cards.values():
        assert counted[(cid, "done")] == 1, counted
        record = await bot.registry.card(cid)
        assert record is not None and record.status is CardStatus.DONE
    assert len(broadcasts(bot)) == 1
    assert bot.shown(card).blocks[0]["text"]["text"] == "Approved and done"


async def test_a_staff_batch_is_routed_and_a_manager_approves_it(bot: Bot) -> None:
    """Ravi (staff) asks for two: the card waits for a manager, each manager gets one copy of
    the batch, Ravi's own press is refused, Meera's approval from her DM runs both and every
    copy shows it."""
    await bot.mention("URAVI", "approve requests 1 and 2")
    [card] = bot.cards()
    assert card.blocks[0]["text"]["text"] == "Waiting for a manager: Arjun Mehta or Meera Iyer"
    copies = {user: bot.cards(bot.dm(user)) for user in ("UARJUN", "UMEERA")}
    assert all(len(found) == 1 for found in copies.values()), copies
    assert buttons(copies["UMEERA"][0].blocks) == ["card_approve", "card_reject"]
    await bot.press("URAVI", card)
    assert await request_status(bot, 1) == "pending"
    assert len(bot.ephemerals("URAVI")) == 1
    await bot.press("UMEERA", copies["UMEERA"][0])
    assert [await request_status(bot, n) for n in (1, 2)] == ["approved", "approved"]
    for shown in (card, copies["UARJUN"][0], copies["UMEERA"][0]):
        blocks = bot.shown(shown).blocks
        assert blocks[0]["text"]["text"] == "Approved and done" and buttons(blocks) == []
    assert len(broadcasts(bot)) == 1


async def test_a_batch_needs_two_approvers_when_one_write_does(bot: Bot) -> None:
    """Requests 1 and 5 (₹42,000) together need two managers: the first approval is counted
    on both, runs nothing and leaves no buttons on the first approver's own copy; the second
    runs both once."""
    await bot.mention("URAVI", "approve requests 1 and 5")
    [card] = bot.cards()
    assert "Needs 2 approvals from different people." in said(card.blocks)
    copies = {user: bot.cards(bot.dm(user))[0] for user in ("UARJUN", "UMEERA")}
    await bot.press("UARJUN", copies["UARJUN"])
    assert [await request_status(bot, n) for n in (1, 5)] == ["pending", "pending"]
    assert "Approved by Arjun Mehta, 1 of 2" in said(bot.shown(card).blocks)
    # Arjun's own copy has nothing left for him to press; Meera's still offers Approve all.
    assert buttons(bot.shown(copies["UARJUN"]).blocks) == []
    assert buttons(bot.shown(copies["UMEERA"]).blocks) == ["card_approve", "card_reject"]
    assert broadcasts(bot) == []
    await bot.press("UMEERA", copies["UMEERA"])
    assert [await request_status(bot, n) for n in (1, 5)] == ["approved", "approved"]
    assert bot.shown(card).blocks[0]["text"]["text"] == "Approved and done"
    [line] = broadcasts(bot)
    assert "Arjun Mehta and Meera Iyer" in line or "Meera Iyer" in line


async def test_reject_all_with_one_reason(bot: Bot) -> None:
    """ "reject requests 4 and 6 because …" is one card; Reject all with a reason ends both
    cards, changes neither request, and the channel reads the reason once."""
    await bot.mention("UARJUN", "reject requests 4 and 6 because over budget")
    [card] = bot.cards()
    assert "Reject request 4" in said(card.blocks) and "Reject request 6" in said(card.blocks)
    await bot.press("UARJUN", card, action="card_reject")
    view = bot.slack.called("views.open")[0]["view"]
    await bot.interact(view_submission("UARJUN", view, reason="Wait for the audit"))
    assert [await request_status(bot, n) for n in (4, 6)] == ["pending", "pending"]
    shown = bot.shown(card)
    assert shown.blocks[0]["text"]["text"] == "Not approved"
    assert "Wait for the audit" in said(shown.blocks)
    assert len(broadcasts(bot)) == 1


async def test_the_asker_withdraws_a_batch(bot: Bot) -> None:
    """Withdraw on a batch ends every card in it; nothing runs, and Approve afterwards is
    refused privately."""
    await bot.mention("UARJUN", "approve requests 1 and 2")
    [card] = bot.cards()
    stale = copy.deepcopy(card)  # the card as a slow phone still shows it, buttons and all
    await bot.press("UARJUN", card, action="card_withdraw")
    assert bot.shown(card).blocks[0]["text"]["text"] == "Withdrawn"
    await bot.press("UARJUN", stale)
    assert [await request_status(bot, n) for n in (1, 2)] == ["pending", "pending"]
    assert len(bot.ephemerals("UARJUN")) == 1


async def test_the_app_home_lists_a_batch_once_with_its_buttons(bot: Bot) -> None:
    """A routed batch is one entry in each manager's Home ("2 changes in one card") with the
    batch's Approve and Reject, and one entry with Withdraw in its asker's."""
    await bot.mention("URAVI", "approve requests 1 and 2")
    for user in ("UARJUN", "URAVI"):
        await bot.send({"type": "app_home_opened", "user": user, "tab": "home"})
    arjun, ravi = bot.home("UARJUN")["blocks"], bot.home("URAVI")["blocks"]
    validate(arjun)
    validate(ravi)
    assert "*Waiting for you* · 1 card" in said(arjun)
    assert said(arjun).count("2 changes in one card") == 1
    assert "Approve request 1 — " in said(arjun) and "Approve request 2 — " in said(arjun)
    assert buttons(arjun) == ["card_approve", "card_reject"]
    assert buttons(ravi) == ["card_withdraw"]
    value = next(e["value"] for b in arjun if b["type"] == "actions" for e in b["elements"])
    assert value == approve_button(bot.cards()[0])["value"]


async def test_the_expiry_sweep_shows_a_batch_expired(bot: Bot) -> None:
    """Past its time, the sweep expires every card of the batch, the batch card says
    "Expired" with no buttons, the asker's open Home tab loses it, and the channel hears
    nothing (nobody decided)."""
    await bot.mention("UARJUN", "approve requests 1 and 2")
    [card] = bot.cards()
    await bot.send({"type": "app_home_opened", "user": "UARJUN", "tab": "home"})
    assert buttons(bot.home("UARJUN")["blocks"]) == ["card_approve", "card_reject"]
    bot.clock.step(timedelta(minutes=31))
    assert await sweeps.expire(bot.services, bot.mounted, now=bot.clock()) == 2
    shown = bot.shown(card)
    validate(shown.blocks)
    assert shown.blocks[0]["text"]["text"] == "Expired" and buttons(shown.blocks) == []
    assert broadcasts(bot) == []
    assert buttons(bot.home("UARJUN")["blocks"]) == []  # the open Home tab was refreshed


async def test_an_escalated_batch_reaches_the_owner_once(bot: Bot) -> None:
    """A routed batch left undecided is escalated: every copy names the owner too, and Priya
    gets one copy of the batch (not one per write), whose Approve runs both writes."""
    await bot.mention("URAVI", "approve requests 1 and 2")
    [card] = bot.cards()
    bot.clock.step(timedelta(minutes=16))
    assert await sweeps.escalate(bot.services, bot.mounted, now=bot.clock(), after=900) == 2
    wider = "Waiting for a manager or the owner: Arjun Mehta, Meera Iyer or Priya Raman"
    assert bot.shown(card).blocks[0]["text"]["text"] == wider
    [priya] = bot.cards(bot.dm("UPRIYA"))
    assert buttons(priya.blocks) == ["card_approve", "card_reject"]
    await bot.press("UPRIYA", priya)
    assert [await request_status(bot, n) for n in (1, 2)] == ["approved", "approved"]
    assert bot.shown(card).blocks[0]["text"]["text"] == "Approved and done"


async def test_a_twenty_first_write_of_a_turn_gets_its_own_card(bot: Bot) -> None:
    """Twenty-one refunds proposed in one turn: the first twenty are one batch card, the
    twenty-first is a card of its own, so every one stays decidable."""
    arjun = await bot.services.directory.resolve("slack", TEAM, "UARJUN")
    assert arjun is not None
    proposals = []
    for order in range(1, 200):
        try:
            result = await bot.registry.call(
                bot.services.agent, "refund_order", {"order_id": order, "amount": "1"}, arjun
            )
        except ConflictError:  # refunded in full, or cancelled
            continue
        assert result.proposal is not None
        proposals.append(result.proposal)
        if len(proposals) == 21:
            break
    client = AsyncWebClient(token=BOT_TOKEN, base_url=bot.slack.base_url)
    adapter = SlackAdapter(client, Where(TEAM, "UARJUN", channel=CHANNEL, thread_ts=bot.ts()))
    left = await post_turn_cards(
        bot.services, adapter, proposals, caller=arjun, conversation="c", installation=TEAM
    )
    assert [p.card_id for p in left] == [proposals[20].card_id]
    [card] = bot.cards()
    validate(card.blocks)
    assert len(card.blocks) <= 50
    assert "'Approve all 20'" in str(approve_button(card)["text"])
    last = await bot.registry.card(proposals[20].card_id)
    assert last is not None and last.batch_id is None


async def test_someone_elses_batch_is_refused_naming_its_owner(bot: Bot) -> None:
    """Meera pressing Approve all on Arjun's batch is told privately it is his; nothing runs
    and the card is left as it was."""
    await bot.mention("UARJUN", "approve requests 1 and 2")
    [card] = bot.cards()
    before = copy.deepcopy(card.blocks)
    await bot.press("UMEERA", card)
    [told] = bot.ephemerals("UMEERA")
    assert "<@UARJUN>" in told
    assert bot.shown(card).blocks == before
    assert [await request_status(bot, n) for n in (1, 2)] == ["pending", "pending"]


async def test_the_reply_names_the_approvers_of_the_batch_card(bot: Bot) -> None:
    """Ravi's "approve requests 1 and 5": request 1 alone would need one manager, request 5
    (₹42,000) two, and the one card they are shown on needs two. The reply above it says so,
    as the card does; it used to repeat request 1's "one of them" beside the card's two."""
    await bot.mention("URAVI", "approve requests 1 and 5")
    [card] = bot.cards()
    assert "Needs 2 approvals from different people." in said(card.blocks)
    [reply] = [
        m.text for m in bot.slack.messages if m.channel == CHANNEL and m is not card and m.thread_ts
    ]
    assert "Arjun Mehta or Meera Iyer" not in reply, reply
    assert "Arjun Mehta and Meera Iyer" in reply, reply


def labels(card: Message) -> list[str]:
    block = next(b for b in card.blocks if b["type"] == "actions")
    return [str(e["text"]["text"]) for e in block["elements"]]


async def test_a_batch_of_two_pairs_approve_both_with_reject_both(bot: Bot) -> None:
    """A card of two reads "Approve both" beside "Reject both" (it read "Reject all"), and a
    card of three "Approve all 3" beside "Reject all 3"."""
    await bot.mention("UARJUN", "approve requests 1 and 2")
    await bot.mention("UARJUN", "approve requests 3, 5 and 6")
    two, three = bot.cards()
    assert labels(two) == ["Approve both", "Reject both", "Withdraw"]
    assert labels(three) == ["Approve all 3", "Reject all 3", "Withdraw"]


async def test_the_confirm_of_three_names_all_three(bot: Bot) -> None:
    """The Approve dialog of a card of three names each of the three requests; it listed two
    and "and 1 more", as if the third were not worth its words."""
    await bot.mention("UARJUN", "approve requests 1, 2 and 3")
    [card] = bot.cards()
    await bot.tap("UARJUN", card)
    [view] = approve_modals(bot)
    assert view["title"]["text"] == "Approve all 3 changes?"
    text = modal_said(view)
    assert all(f"request {n}" in text for n in (1, 2, 3)), text
    assert "more" not in text and len(text) <= 300


async def test_the_channel_line_of_a_done_batch_is_ticked(bot: Bot) -> None:
    """The channel's line for a batch approved and done starts with a ✅, as a single card's
    does; it had no mark at all."""
    await bot.mention("UARJUN", "approve requests 1 and 2")
    [card] = bot.cards()
    await bot.press("UARJUN", card)
    [line] = broadcasts(bot)
    assert line.startswith(":white_check_mark: Approved and done (Arjun Mehta)"), line
