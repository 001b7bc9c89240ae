"""Slack and Teams on one server: a card decided in each is audited alike, apart from the surface."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from tests.slack.conftest import SIGNING_SECRET
from tests.support.slack_requests import (
    TEAM,
    block_action,
    event,
    form,
    message,
    signed,
    view_submission,
)
from tests.teams.conftest import ARJUN, TeamsBot
from tools.db import AuditRow

CHANNEL = "C0OPS"


async def slack_post(teams: TeamsBot, body: str, content_type: str) -> int:
    headers = signed(body, SIGNING_SECRET, content_type=content_type)
    url = teams.server.make_url("/slack/events")
    async with teams.http.post(url, data=body.encode(), headers=headers) as response:
        status = response.status
    await teams.services.tasks.idle()  # bolt's listeners ran before it answered
    return status


async def slack_card_approved(teams: TeamsBot, text: str) -> str:
    """Arjun asks in Slack and approves there; returns the card id."""
    await teams.services.directory.link("slack", TEAM, "UARJUN", "arjun@fiesta.example")
    inner = message(
        "UARJUN", f"<@UBOT> {text}", channel=CHANNEL, ts="1800000000.000100", kind="app_mention"
    )
    assert await slack_post(teams, json.dumps(event(inner)), "application/json") == 200
    card = next(m for m in teams.slack.messages if any(b["type"] == "actions" for b in m.blocks))
    block = next(b for b in card.blocks if b["type"] == "actions")
    payload = block_action(
        "UARJUN",
        action_id="card_approve",
        value=block["elements"][0]["value"],
        block_id=block["block_id"],
        channel=CHANNEL,
        message_ts=card.ts,
    )
    assert await slack_post(teams, form(payload), "application/x-www-form-urlencoded") == 200
    # The channel's card asks its confirm in a modal: "Yes, approve" is the press.
    [opened] = teams.slack.called("views.open")
    confirmed = form(view_submission("UARJUN", opened["view"], values={}))
    assert await slack_post(teams, confirmed, "application/x-www-form-urlencoded") == 200
    return str(block["block_id"].split("-")[1])


async def trail(teams: TeamsBot, card_id: str) -> list[dict[str, Any]]:
    """The card's audit rows, oldest first, without what differs by nature (time, ids, request)."""
    async with teams.services.db.session() as session:
        stmt = select(AuditRow).where(AuditRow.card_id == card_id).order_by(AuditRow.id)
        rows = (await session.scalars(stmt)).all()
    return [
        {
            "agent": r.agent,
            "tool": r.tool,
            "user": r.user_id,
            "tenant": r.tenant_id,
            "scope": r.scope,
            "outcome": r.outcome,
            "rows": r.rows,
            "args": sorted((r.args or {}).keys()),
        }
        for r in rows
    ]


async def test_slack_and_teams_cards_are_audited_alike(teams: TeamsBot) -> None:
    """Request 3 approved in Slack and request 6 in Teams leave the same audit trail shape."""
    slack_card = await slack_card_approved(teams, "approve request 3")
    posted = await teams.card_for(ARJUN, "approve request 6")
    status, _ = await teams.press(ARJUN, "approve", posted)
    assert status == 200
    teams_card = posted.cards[0]["refresh"]["action"]["data"]["card"]
    slack_trail, teams_trail = await trail(teams, slack_card), await trail(teams, teams_card)
    assert [r["outcome"] for r in teams_trail] == ["proposed", "approved", "done"]
    assert slack_trail == teams_trail
    slack_record = await teams.registry.card(slack_card)
    teams_record = await teams.registry.card(teams_card)
    assert slack_record is not None and teams_record is not None
    assert (slack_record.posting or {})["platform"] == "slack"
    assert (teams_record.posting or {})["platform"] == "teams"
    assert (slack_record.userid, slack_record.tenantid) == (
        teams_record.userid,
        teams_record.tenantid,
    )
