"""Populates the sandbox with the demo merchants' Slack: two workspaces, their people and channels; never links anyone.

The Slack accounts carry the demo people's verified emails, so the bot links each of them by
itself on their first message (``users.info``), exactly as it links people in a real
workspace. Fiesta Foods has #fiesta-ops with Priya (owner), Arjun and Meera (managers) and
Ravi (staff); Harbor Books, a second workspace, has Sam (owner) in #harbor-books. Everyone has
a DM with the app.
"""

from __future__ import annotations

from typing import Final

from bot.sandbox.workspace import Workspace

__all__ = ["FIESTA_OPS", "FIESTA_TEAM", "HARBOR_CHANNEL", "HARBOR_TEAM", "PEOPLE", "demo_workspace"]

FIESTA_TEAM: Final = "T0FIESTA"
HARBOR_TEAM: Final = "T0HARBOR"
FIESTA_OPS: Final = "C0FIESTAOPS"
HARBOR_CHANNEL: Final = "C0HARBOR"

# Slack user id → (name, demo email, role shown on the profile, workspace)
PEOPLE: Final = {
    "UPRIYA": ("Priya Raman", "priya@fiesta.example", "Owner", FIESTA_TEAM),
    "UARJUN": ("Arjun Mehta", "arjun@fiesta.example", "Manager", FIESTA_TEAM),
    "UMEERA": ("Meera Iyer", "meera@fiesta.example", "Manager", FIESTA_TEAM),
    "URAVI": ("Ravi Kumar", "ravi@fiesta.example", "Staff", FIESTA_TEAM),
    "USAM": ("Sam Lee", "sam@harbor.example", "Owner", HARBOR_TEAM),
}


def demo_workspace() -> Workspace:
    """A fresh in-memory Slack holding the demo merchants' workspaces."""
    workspace = Workspace(team_id=FIESTA_TEAM, team_name="Fiesta Foods")
    workspace.add_team(HARBOR_TEAM, "Harbor Books")
    workspace.add_channel(FIESTA_OPS, "fiesta-ops", team=FIESTA_TEAM)
    workspace.add_channel(HARBOR_CHANNEL, "harbor-books", team=HARBOR_TEAM)
    for user_id, (name, email, title, team) in PEOPLE.items():
        workspace.add_user(user_id, name, email, team=team, title=title)
        workspace.join(FIESTA_OPS if team == FIESTA_TEAM else HARBOR_CHANNEL, user_id)
    return workspace
