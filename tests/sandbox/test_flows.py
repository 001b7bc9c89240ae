"""People acting in the sandbox reach the real bot as Slack would, and see what Slack would show."""

from __future__ import annotations

from sqlalchemy import select

from bot.sandbox import FIESTA_OPS, FIESTA_TEAM
from bot.slack.blocks import card_id_of_block
from tests.sandbox.conftest import Stack
from tools.db import Database
from tools.people.directory import Directory
from tools.toolsets.merchant.models import BranchRequest


async def status_of(db: Database, request_id: int) -> str:
    async with db.session() as session:
        found = await session.scalar(
            select(BranchRequest.status).where(BranchRequest.id == request_id)
        )
    return str(found)


async def ask(stack: Stack, user: str, text: str) -> str:
    message = stack.acting.say(user, FIESTA_OPS, text)
    assert message is not None
    await stack.settle()
    return message.ts


async def test_a_mention_is_delivered_twice_and_answered_once_with_one_card(stack: Stack) -> None:
    """@countersign in #fiesta-ops goes out as app_mention and message.channels; one card comes back."""
    ts = await ask(stack, "UARJUN", "@countersign approve request 1")
    envelopes = [c for c in stack.api.calls if c.method == "chat.postMessage"]
    assert len(stack.cards(FIESTA_OPS)) == 1
    card = stack.cards(FIESTA_OPS)[0]
    assert card.thread_ts == ts
    assert any("approve" in c.params.get("text", "").lower() for c in envelopes)
    assert stack.api.message(FIESTA_OPS, ts).text == "<@UBOT> approve request 1"


async def test_the_bot_links_a_sandbox_person_by_verified_email_on_first_contact(
    stack: Stack, db: Database
) -> None:
    """Nobody is linked up front: users.info's email links Arjun to the demo person on his first message."""
    assert await Directory(db).resolve("slack", FIESTA_TEAM, "UARJUN") is None
    await ask(stack, "UARJUN", "@countersign branches")
    caller = await Directory(db).resolve("slack", FIESTA_TEAM, "UARJUN")
    assert caller is not None and caller.name == "Arjun Mehta"
    assert [c.params["user"] for c in stack.api.calls if c.method == "users.info"] == ["UARJUN"]


async def test_approve_updates_the_card_and_posts_the_audit_message(
    stack: Stack, db: Database
) -> None:
    """Arjun's Approve runs the write once, replaces the card in place and broadcasts the audit line."""
    await ask(stack, "UARJUN", "@countersign approve request 1")
    card = stack.cards(FIESTA_OPS)[0]
    actions = next(b for b in card.blocks if b["type"] == "actions")
    outcome = await stack.approve(
        "UARJUN", block_id=actions["block_id"], channel=FIESTA_OPS, ts=card.ts
    )
    assert outcome.ok
    assert stack.api.message(FIESTA_OPS, card.ts).blocks[0]["text"]["text"] == "Approved and done"
    audit = [m for m in stack.api.messages if m.reply_broadcast]
    assert len(audit) == 1 and "Approved and done (Arjun Mehta): Approve request 1" in audit[0].text
    assert await status_of(db, 1) == "approved"


async def test_someone_elses_press_is_refused_privately_and_changes_nothing(
    stack: Stack, db: Database
) -> None:
    """Meera pressing Arjun's card gets an ephemeral refusal only she sees; the request stays pending."""
    await ask(stack, "UARJUN", "@countersign approve request 2")
    card = stack.cards(FIESTA_OPS)[0]
    before = list(card.blocks)
    actions = next(b for b in card.blocks if b["type"] == "actions")
    await stack.acting.press(
        "UMEERA",
        action_id="card_approve",
        block_id=actions["block_id"],
        channel=FIESTA_OPS,
        ts=card.ts,
    )
    await stack.settle()
    refusals = [m for m in stack.api.messages if m.ephemeral_to == "UMEERA"]
    assert len(refusals) == 1 and "<@UARJUN>" in refusals[0].text
    assert refusals[0] in stack.api.workspace.visible("UMEERA")
    assert refusals[0] not in stack.api.workspace.visible("UARJUN")
    assert stack.api.message(FIESTA_OPS, card.ts).blocks == before
    assert await status_of(db, 2) == "pending"


async def test_reject_opens_the_modal_for_the_presser_and_submits_the_reason(
    stack: Stack, db: Database
) -> None:
    """Reject opens the reason modal for Arjun alone; submitting it rejects the card with his reason."""
    await ask(stack, "UARJUN", "@countersign approve request 3")
    card = stack.cards(FIESTA_OPS)[0]
    actions = next(b for b in card.blocks if b["type"] == "actions")
    await stack.acting.press(
        "UARJUN",
        action_id="card_reject",
        block_id=actions["block_id"],
        channel=FIESTA_OPS,
        ts=card.ts,
    )
    await stack.settle()
    assert set(stack.api.workspace.modals) == {"UARJUN"}
    values = {"reason": {"reason_input": {"type": "plain_text_input", "value": "Over budget"}}}
    outcome = await stack.acting.submit("UARJUN", values)
    await stack.settle()
    assert outcome.ok
    assert stack.api.workspace.modals == {}
    assert stack.api.message(FIESTA_OPS, card.ts).blocks[0]["text"]["text"] == "Not approved"
    record = await stack.registry.card(str(card_id_of_block(actions["block_id"])))
    assert record is not None and record.reason == "Over budget"
    assert await status_of(db, 3) == "pending"  # rejecting the card leaves the request undecided


async def test_a_dm_reaches_the_bot_as_message_im(stack: Stack) -> None:
    """A DM to the app is delivered as message.im and answered in the DM."""
    dm = stack.api.workspace.dm_of("URAVI")
    assert dm is not None
    stack.acting.say("URAVI", dm.id, "branches")
    await stack.settle()
    answers = [m for m in stack.api.messages if m.channel == dm.id and m.user == "UBOT"]
    assert answers and "Indiranagar" in answers[0].text


async def test_opening_the_home_tab_publishes_the_persons_home(stack: Stack) -> None:
    """app_home_opened makes the bot publish Priya's App Home, which only she receives."""
    stack.acting.open_home("UPRIYA")
    await stack.settle()
    assert set(stack.api.workspace.homes) == {"UPRIYA"}
    assert stack.api.workspace.homes["UPRIYA"]["type"] == "home"


async def test_the_slash_command_answers_privately_through_the_response_url(stack: Stack) -> None:
    """`/countersign help` typed in the composer answers as an ephemeral message to that person."""
    assert stack.acting.say("UMEERA", FIESTA_OPS, "/countersign help") is None
    await stack.settle()
    answers = [m for m in stack.api.messages if m.ephemeral_to == "UMEERA"]
    assert len(answers) == 1 and "Countersign" in answers[0].text


async def test_sam_of_the_second_workspace_sees_only_harbor_books(stack: Stack) -> None:
    """Sam, in Harbor Books' workspace, is linked to his own merchant and is answered with its branches."""
    dm = stack.api.workspace.dm_of("USAM")
    assert dm is not None
    stack.acting.say("USAM", dm.id, "branches")
    await stack.settle()
    [answer] = [m for m in stack.api.messages if m.channel == dm.id and m.user == "UBOT"]
    assert "Downtown" in answer.text and "Indiranagar" not in answer.text
    assert FIESTA_OPS not in {c["id"] for c in stack.api.workspace.snapshot("USAM")["channels"]}
