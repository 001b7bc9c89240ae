"""The Teams app package and settings: a manifest to sideload, its icons, and the variables."""

from __future__ import annotations

import json
import struct

import pytest

from bot.settings import SettingsError, load_settings
from bot.teams.icons import PACKAGE, color_icon, outline_icon


def size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_manifest_names_the_bot_by_placeholder_and_its_icons() -> None:
    """manifest.json (schema 1.17) has the bot id placeholder in both places and both icons."""
    manifest = json.loads((PACKAGE / "manifest.json").read_text())
    assert manifest["manifestVersion"] == "1.17"
    assert manifest["id"] == manifest["bots"][0]["botId"] == "${{BOT_ID}}"
    assert set(manifest["bots"][0]["scopes"]) == {"personal", "team", "groupChat"}
    assert manifest["icons"] == {"color": "color.png", "outline": "outline.png"}
    assert len(manifest["name"]["short"]) <= 30 and len(manifest["description"]["short"]) <= 80


def test_icons_are_the_sizes_teams_requires_and_match_their_source() -> None:
    """color.png is 192x192 and outline.png 32x32, and both equal what icons.py draws."""
    color, outline = (PACKAGE / "color.png").read_bytes(), (PACKAGE / "outline.png").read_bytes()
    assert size(color) == (192, 192) and size(outline) == (32, 32)
    assert color == color_icon() and outline == outline_icon()


def test_teams_settings_turn_the_surface_on_and_need_each_other() -> None:
    """MICROSOFT_APP_ID turns Teams on; without its password, or the card secret, start-up says so."""
    on = load_settings(
        _env_file=None,
        microsoft_app_id="app",
        microsoft_app_password="pw",
        countersign_secret="a-card-secret-of-enough-length",
    )
    assert on.teams_enabled
    assert not load_settings(_env_file=None).teams_enabled
    with pytest.raises(SettingsError, match="MICROSOFT_APP_ID and MICROSOFT_APP_PASSWORD"):
        load_settings(
            _env_file=None,
            microsoft_app_id="app",
            countersign_secret="a-card-secret-of-enough-length",
        )
    with pytest.raises(SettingsError, match="COUNTERSIGN_SECRET must be set when Teams"):
        load_settings(_env_file=None, microsoft_app_id="app", microsoft_app_password="pw")
