"""A Teams card decided by a process that died before Teams was told is redrawn, once."""

from __future__ import annotations

from bot.server import RUNTIME, settle
from tests.teams.adaptive import actions, texts, validate
from tests.teams.conftest import ARJUN, TeamsBot, card_data
from tools import Caller, CardStatus, ProcessLease, Role
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry


async def test_a_decision_a_stopped_process_never_showed_is_redrawn_in_teams(
    teams: TeamsBot,
) -> None:
    """Arjun's approval commits in another server that stops before updating Teams; this
    server's settling redraws the card for everyone, without buttons, and posts the audit line
    in its conversation, once however often it settles."""
    posted = await teams.card_for(ARJUN)
    token = card_data(posted.cards[0])["token"]
    lease = ProcessLease(teams.services.db, clock=teams.clock)
    other = build_registry(teams.services.db, teams.signer, clock=teams.clock, lease=lease)
    await lease.start()
    arjun = Caller(2, 1, Role.MANAGER, "Arjun Mehta")
    decision = await other.approve(DEFAULT_AGENT, token, arjun)
    assert decision.card.status is CardStatus.DONE
    await lease.stop()
    assert teams.connector.updates() == []

    runtime = teams.server.app[RUNTIME]
    await settle(runtime)
    await settle(runtime)

    [update] = teams.connector.updates()
    assert update.activity_id == posted.created
    [shown] = update.cards
    validate(shown)
    assert actions(shown) == [] and "refresh" not in shown
    assert "approved" in texts(shown).lower()
    [line] = [t for t in teams.connector.texts() if "Approve request 3" in t]
    assert "Arjun Mehta" in line
    record = await teams.registry.card(decision.card.card_id)
    assert record is not None and record.shown_at is not None
