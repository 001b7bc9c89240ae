"""What the offline model answers from our own reads: every row whole, however long."""

from __future__ import annotations

import re

from sqlalchemy import update

from bot.agent import Assistant
from tests.agent.conftest import ARJUN
from tools.db import Database
from tools.toolsets.merchant.models import Branch, Order

LONG = "Sri Venkateshwara Catering and Events for Weddings, Namings and Housewarmings " * 2


async def test_a_long_customer_name_does_not_cut_the_row_it_is_in(
    assistant: Assistant, db: Database
) -> None:
    """An order listed with a customer name of 150 characters still shows its total and
    status after it: each line was cut at 160 characters, mid-word, saying nothing."""
    async with db.session() as session:
        await session.execute(update(Order).values(customer=LONG.strip()))
        await session.commit()

    reply = await assistant.reply(conversation="c", caller=ARJUN, text="orders")

    bullets = [line for line in reply.text.splitlines() if line.startswith("• ")]
    assert bullets
    for line in bullets:
        assert re.search(re.escape(LONG.strip()) + r" · ₹[\d,]+\.\d\d · \w[\w ]* · .+ UTC$", line)


async def test_a_long_branch_name_keeps_its_city(assistant: Assistant, db: Database) -> None:
    """A branch of a 190-character name is listed with its city and status, whole."""
    async with db.session() as session:
        await session.execute(update(Branch).where(Branch.id == 1).values(name=LONG[:190]))
        await session.commit()

    reply = await assistant.reply(conversation="c", caller=ARJUN, text="branches")

    [line] = [line for line in reply.text.splitlines() if LONG[:60] in line]
    assert line.endswith(("open", "closed")), line
