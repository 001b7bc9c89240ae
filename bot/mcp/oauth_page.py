"""The authorization page's HTML and words: one email input and one button, then the code; never decides.

Every word a person reads on the page is here. The waiting page polls its status address and
moves on by itself when the person answers the card in Slack or Teams (no reload needed).
The page is the same whether or not the email belongs to anyone.
"""

from __future__ import annotations

from html import escape

__all__ = ["ask_page", "gone_page", "waiting_page"]

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}"
    "input,button{font-size:1rem;padding:.5rem;width:100%;box-sizing:border-box;margin:.5rem 0}"
    ".code{font-size:2rem;letter-spacing:.2rem;font-weight:bold}"
)


def _page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><h1>{escape(title)}</h1>{body}</body></html>"
    )


def ask_page(handle: str, client_name: str) -> str:
    """The one question: the person's work email."""
    return _page(
        "Connect to Countersign",
        f"<p><b>{escape(client_name)}</b> asks to connect to Countersign as you. Type your work "
        "email: Countersign sends you a card in Slack (or Teams) to allow it. No password.</p>"
        '<form method=post action="/oauth/consent">'
        f'<input type=hidden name=request value="{escape(handle)}">'
        "<label>Work email<input type=email name=email required autocomplete=email></label>"
        "<button type=submit>Send me the card</button></form>",
    )


def waiting_page(handle: str, code: str) -> str:
    """Check your Slack: the code the card shows, and a poll that moves on by itself."""
    status = f"/oauth/consent/status?request={escape(handle)}"
    script = (
        "<script>(async function poll(){try{const r=await fetch("
        f'"{status}",{{cache:"no-store"}});const s=await r.json();'
        "if(s.redirect){location.href=s.redirect;return}}catch(e){}"
        "setTimeout(poll,2000)})()</script>"
    )
    return _page(
        "Check your Slack",
        "<p>If that email is yours in Countersign, a card is waiting in your DM with the app "
        "(in Teams, your chat with it). Allow it only if it shows this code:</p>"
        f"<p class=code id=code>{escape(code)}</p>"
        "<p>This page moves on by itself when you answer. The card waits 10 minutes.</p>" + script,
    )


def gone_page() -> str:
    return _page(
        "This link has expired",
        "<p>This request to connect is unknown, answered or older than 10 minutes. Start "
        "again from the agent (connect it once more).</p>",
    )
