"""Every word a person reads on a consent card in Slack: who asks to connect, and the answer."""

from __future__ import annotations

from bot.slack.mrkdwn import esc as escape

__all__ = ["ALLOW", "DENY", "allowed", "asked", "code_line", "denied", "push", "too_late"]

ALLOW = "Allow"
DENY = "Deny"


def push(client_name: str) -> str:
    return f"{client_name} asks to connect to Countersign as you"


def asked(client_name: str, client_host: str, merchant: str) -> str:
    name, host, shop = escape(client_name), escape(client_host), escape(merchant)
    return (
        f"*{name}* ({host}) asks to connect to Countersign as you, for *{shop}*.\n"
        f"If you allow it, it will be able to read {shop}'s data, and ask for changes that "
        "wait for a countersignature like any card. It can never make a change by itself."
    )


def code_line(code: str) -> str:
    return f"Allow only if the page you just used shows the code *{escape(code)}*."


def allowed(client_name: str, code: str) -> str:
    return f"You allowed *{escape(client_name)}* to connect (code {escape(code)})."


def denied(client_name: str, code: str) -> str:
    return f"You denied *{escape(client_name)}* (code {escape(code)}). It was not connected."


def too_late() -> str:
    return (
        "This request to connect is no longer waiting (it was answered, or its 10 minutes "
        "ran out). Start again from the agent if you still want to connect it."
    )
