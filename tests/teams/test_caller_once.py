"""Who a Teams turn is from is found once per turn, whatever its handlers do with them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.teams.adaptive import texts
from tests.teams.conftest import ARJUN, MEERA, TeamsBot


@pytest.fixture
def lookups(teams: TeamsBot, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The AAD object ids the directory was asked to identify, one entry per lookup."""
    directory = teams.services.directory
    real = directory.identify
    asked: list[str] = []

    async def identify(platform: str, installation: str, user: str) -> Any:
        asked.append(user)
        return await real(platform, installation, user)

    monkeypatch.setattr(directory, "identify", identify)
    return asked


async def test_a_reject_finds_its_presser_once(teams: TeamsBot, lookups: list[str]) -> None:
    """Arjun's refresh and his Reject are one lookup each, and the card he gets back is rejected."""
    posted = await teams.card_for(ARJUN)
    lookups.clear()
    await teams.refresh(ARJUN, posted)
    assert lookups == [ARJUN.aad]
    lookups.clear()
    status, body = await teams.press(ARJUN, "reject", posted, reason="Budget")
    assert status == 200
    assert lookups == [ARJUN.aad]
    assert "Not approved" in texts(body["value"])


async def test_someone_elses_press_finds_them_once(teams: TeamsBot, lookups: list[str]) -> None:
    """Meera approving Arjun's card is looked up once and told whose card it is."""
    posted = await teams.card_for(ARJUN)
    lookups.clear()
    status, body = await teams.press(MEERA, "approve", posted)
    assert status == 200
    assert lookups == [MEERA.aad]
    assert "Arjun" in texts(body["value"])
