"""What Slack's assistant pane says: a thread's title, its suggested prompts, the agent's status,
and the feedback buttons under an answer.

A status names the step the agent is on, from the tool it is calling: never the model's words
(a status is plain text Slack shows after the app's name, "Countersign is reading requests…").
Never posts anything.
"""

from __future__ import annotations

from bot.adapter import Step
from tools import Role

__all__ = [
    "FEEDBACK_BAD",
    "FEEDBACK_BAD_LABEL",
    "FEEDBACK_GOOD",
    "FEEDBACK_GOOD_LABEL",
    "THINKING",
    "feedback_thanks",
    "prompts",
    "question_title",
    "status",
    "title",
]

THINKING = "is thinking…"
_PREPARING = "is preparing a card…"
_LOOKING = "is looking it up…"
# The reference tools by what they read; anything else (an MCP server's) is named by its server.
_READING = {
    "list_requests": "is reading requests…",
    "get_request": "is reading the request…",
    "list_orders": "is reading orders…",
    "get_order": "is reading the order…",
    "list_branches": "is reading branches…",
    "get_branch": "is reading the branch…",
    "stock_levels": "is reading stock levels…",
    "sales_summary": "is adding up sales…",
}
_MCP_SEPARATOR = "__"

# Each prompt is a message the agent (the offline model too) answers as written.
_EVERYONE = (
    ("Pending requests", "Pending requests"),
    ("Sales this week", "Sales this week"),
    ("Branches", "Branches"),
)
_APPROVER = (("What's waiting for me?", "What's waiting for me?"),)


def status(step: Step) -> str:
    """The status for the tool being called: a card being prepared, or what is being read."""
    if step.write:
        return _PREPARING
    if step.tool in _READING:
        return _READING[step.tool]
    server, separator, _ = step.tool.partition(_MCP_SEPARATOR)
    return f"is asking {server}…" if separator and server else _LOOKING


def prompts(role: Role | None) -> list[dict[str, str]]:
    """The prompts a thread starts with: what this person's role can do (cards to decide for
    managers and owners; everyone reads)."""
    offered = (
        (*_APPROVER, *_EVERYONE) if role is not None and role.satisfies(Role.MANAGER) else _EVERYONE
    )
    return [{"title": shown, "message": message} for shown, message in offered]


def title(name: str | None) -> str:
    """A new thread's title, naming whom it answers (Slack shows it in the thread list)."""
    return f"Countersign for {name}" if name else "Countersign"


# Slack's History lists threads by title: long enough to tell questions apart on a phone.
_TITLE_CHARS = 60


def question_title(text: str) -> str:
    """A thread's title once its first question is asked: the question on one line, as typed,
    cut between words (History listed every thread alike, "Countersign for Arjun Mehta")."""
    said = " ".join(text.split())
    if len(said) <= _TITLE_CHARS:
        return said
    cut = said[: _TITLE_CHARS - 1].rsplit(" ", 1)[0] or said[: _TITLE_CHARS - 1]
    return f"{cut}…"


# The thumbs under an answer (Slack's feedback buttons: plain text, at most 75 characters).
FEEDBACK_GOOD = "👍"
FEEDBACK_BAD = "👎"
FEEDBACK_GOOD_LABEL = "This answer helped"
FEEDBACK_BAD_LABEL = "This answer did not help"


def feedback_thanks(good: bool) -> str:
    """What only the presser reads once their press is recorded."""
    if good:
        return "Thanks, glad that helped. I've noted it for your shop's owner."
    return (
        "Thanks for telling me. I've noted it for your shop's owner, so the answer can get better."
    )
