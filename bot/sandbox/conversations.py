"""Answers Slack's ``conversations.*`` methods from the workspace: what a channel is, the app's DM with a person; never posts.

A card issued to managers reaches each of them as a DM from the app: the Slack side calls
``conversations.open(users=…)`` and posts the copy into the channel it answers, then updates
that copy in place. Slack answers the same DM every time for one workspace and person, and
so does this.
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.workspace import BOT_USER, Workspace

__all__ = ["info", "open_dm"]

Json = dict[str, Any]


def info(workspace: Workspace, params: Json) -> Json:
    """``conversations.info``: the channel's name and kind; a DM names its person (``user``)."""
    channel = workspace.channels.get(params["channel"])
    is_im = params["channel"].startswith("D")
    name = channel.name if channel else params["channel"]
    shown: Json = {"id": params["channel"], "name": name, "is_im": is_im, "is_channel": not is_im}
    if is_im and channel is not None:
        shown["user"] = _other_member(channel.members)
    return {"ok": True, "channel": shown}


def open_dm(workspace: Workspace, params: Json) -> Json:
    """``conversations.open``: the app's DM with one person (``users=U…``), or an open DM named
    by ``channel=D…``. ``team_id`` names the workspace (org-wide apps pass it), else it is the
    person's own."""
    if params.get("channel"):
        dm = workspace.channels.get(str(params["channel"]))
        if dm is None or dm.kind != "im":
            return {"ok": False, "error": "channel_not_found"}
        return _opened(dm.id, _other_member(dm.members), already=True)
    users = [u.strip() for u in str(params.get("users") or "").split(",") if u.strip()]
    team = str(params.get("team_id") or "") or None
    refused = _cannot_open(workspace, users, team)
    if refused is not None:
        return {"ok": False, "error": refused}
    existed = set(workspace.channels)
    dm = workspace.open_dm(users[0], team=team)
    return _opened(dm.id, users[0], already=dm.id in existed)


def _cannot_open(workspace: Workspace, users: list[str], team: str | None) -> str | None:
    """Slack's error for a DM that cannot be opened, or None."""
    if not users:
        return "users_list_not_supplied"
    if len(users) > 1:
        # A group DM (mpim): the bot never opens one, and the page has nowhere to show it.
        return "not_supported_by_sandbox"
    person = workspace.users.get(users[0])
    if person is None:
        return "user_not_found"
    if person.is_bot:
        return "cannot_dm_bot"
    return "team_not_found" if team is not None and team not in workspace.teams else None


def _other_member(members: set[str]) -> str:
    """The person in a DM with the app."""
    return next((m for m in sorted(members) if m != BOT_USER), "")


def _opened(channel: str, user: str, *, already: bool) -> Json:
    """conversations.open's answer, ``return_im`` or not (the extra fields do no harm)."""
    return {
        "ok": True,
        "no_op": already,
        "already_open": already,
        "channel": {"id": channel, "is_im": True, "user": user, "is_open": True},
    }
