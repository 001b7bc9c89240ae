"""Answers Slack's ``chat.startStream`` / ``appendStream`` / ``stopStream`` from the workspace, as
Slack documents them; never calls Slack.

``startStream`` posts a message into a thread (a DM, or a channel when it names the person it
streams to: ``recipient_user_id`` and ``recipient_team_id``), ``appendStream`` adds its words
to it, and ``stopStream`` adds the last ones and its ``blocks`` (the feedback buttons) and ends
it. Each step reaches the page's live feed as the message's new state, as any update does.
Words come as ``markdown_text`` or as ``chunks`` of that type (slack_sdk's helper sends those).
"""

from __future__ import annotations

from typing import Any

from bot.sandbox.workspace import BOT_USER, Message, Workspace

__all__ = ["append", "start", "stop"]

Json = dict[str, Any]

_LIMIT = 12_000  # characters of markdown_text one call may carry


def start(workspace: Workspace, params: Json) -> Json:
    channel = str(params.get("channel") or "")
    thread_ts = str(params.get("thread_ts") or "")
    if not channel:
        return _error("channel_not_found")
    if not thread_ts:
        return _error("invalid_thread_ts")
    outside_dm = not workspace.channel_for(channel).startswith("D")
    if outside_dm and not (params.get("recipient_user_id") and params.get("recipient_team_id")):
        return _error("invalid_arguments")  # a channel's stream is for one named person
    text = _words(params)
    if text is None:
        return _error("invalid_arguments")
    message = workspace.post(
        Message(
            channel=workspace.channel_for(channel),
            ts=workspace.next_ts(),
            text=text,
            thread_ts=thread_ts,
            user=BOT_USER,
            streamed=True,
            streaming=True,
        )
    )
    return {"ok": True, "channel": message.channel, "ts": message.ts}


def append(workspace: Workspace, params: Json) -> Json:
    found = _streaming(workspace, params)
    if isinstance(found, dict):
        return found
    text = _words(params)
    if not text:
        return _error("invalid_arguments")
    workspace.grow(found, text)
    return {"ok": True, "channel": found.channel, "ts": found.ts}


def stop(workspace: Workspace, params: Json) -> Json:
    found = _streaming(workspace, params)
    if isinstance(found, dict):
        return found
    text = _words(params)
    blocks = params.get("blocks")
    if text is None or not isinstance(blocks, list | None):
        return _error("invalid_arguments")
    found.streaming = False
    workspace.grow(found, text, blocks=list(blocks or found.blocks))
    shown = {"type": "message", "text": found.text, "ts": found.ts, "user": BOT_USER}
    return {"ok": True, "channel": found.channel, "ts": found.ts, "message": shown}


def _streaming(workspace: Workspace, params: Json) -> Message | Json:
    channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
    try:
        message = workspace.message(workspace.channel_for(channel), ts)
    except StopIteration:
        return _error("message_not_found")
    if not message.streaming:
        return _error("message_not_in_streaming_state")
    return message


def _words(params: Json) -> str | None:
    """The words a call adds: its markdown_text and its markdown chunks ("" for none); None
    when they are not of that shape or over Slack's limit."""
    text = params.get("markdown_text") or ""
    chunks = params.get("chunks") or []
    if not isinstance(text, str) or not isinstance(chunks, list):
        return None
    for chunk in chunks:
        if not (isinstance(chunk, dict) and chunk.get("type") == "markdown_text"):
            return None
        text += str(chunk.get("text") or "")
    return text if len(text) <= _LIMIT else None


def _error(error: str) -> Json:
    return {"ok": False, "error": error}
