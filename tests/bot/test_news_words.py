"""The owner's notice of new MCP tools, in each surface's words: the server's names inert, and a
server listing thousands of tools still one readable message."""

from __future__ import annotations

from bot.slack import texts as slack
from bot.teams import texts as teams
from tools import Scope


def test_a_tool_named_like_a_slack_token_pings_nobody() -> None:
    """A server names a tool ``<!channel>``: Slack's push text has it escaped, and the lines the
    owner reads show it as typed."""
    said = slack.new_tools("Fiesta Foods", "odd", {"<!channel>": Scope.WRITE})

    assert "<!channel>" not in said
    assert "&lt;!channel&gt; (the server marks it a write)" in said
    assert isinstance(said, slack.Said)
    shown = "".join(e["text"] for line in said.lines for e in line)
    assert "<!channel> (the server marks it a write)" in shown
    assert 'countersign mcp review "Fiesta Foods" odd' in shown


def test_thousands_of_new_tools_are_counted_not_listed() -> None:
    """A server that lists 5,000 new tools, one with a name of 10,000 characters, gives one
    message of whole names that says how many more there are and still ends with the command."""
    tools = {f"tool_{n:04}": Scope.READ for n in range(5000)} | {"x" * 10_000: Scope.WRITE}

    for said in (
        slack.new_tools("Fiesta Foods", "odd", tools),
        teams.new_tools("Fiesta Foods", "odd", tools),
    ):
        assert len(said) < 3000
        assert "tool_0000 (the server marks it read-only)" in said
        assert "more." in said
        assert said.endswith("(or --read TOOL / --write TOOL to say which yourself).")
