"""Takes credentials out of log lines and tracebacks before they are written; never drops a line.

A request's credentials reach the log by ways nobody wrote on purpose: aiohttp's 400 for an
oversized header quotes its first hundred bytes in the traceback (``Bearer cs_mcp_…`` or a
cookie), a parse error quotes the malformed line, a library logs a URL with its query or a
dict of headers. Every line, ours and the libraries', passes through one ``Redactor``: header
values of the credential headers, bearer and basic credentials, the token shapes of MCP, Slack
and Microsoft (JWTs), credential query parameters, URL passwords, the configuration's own
secrets, and all the request bytes aiohttp quotes in a parse error become ``[redacted]``.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterable
from types import TracebackType
from typing import Any

from aiohttp.http_exceptions import HttpProcessingError
from structlog.typing import EventDict, WrappedLogger

__all__ = ["REDACTED", "RedactingFormatter", "Redactor"]

REDACTED = "[redacted]"
_HEADERS = r"authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token"
_PARAMS = r"access_token|refresh_token|id_token|token|code|client_secret|password|secret|api_key"
_CREDENTIAL_CHARS = r"[A-Za-z0-9._~+/=-]"
# Each pattern keeps what names the credential (group 1) and replaces the value itself.
_PATTERNS = (
    # "Authorization: Bearer …", "'cookie': 'session=…'", "authorization=…"
    re.compile(rf"(?i)\b((?:{_HEADERS})[\"']?\s*[:=]\s*[\"']?)[^\r\n\"']+"),
    re.compile(rf"(?i)\b((?:bearer|basic|digest)\s+){_CREDENTIAL_CHARS}{{6,}}"),
    re.compile(r"\b(cs_mcp_)[A-Za-z0-9_-]+"),  # a /mcp token
    re.compile(r"\b(xox[a-z]-|xapp-)[A-Za-z0-9-]+"),  # Slack's bot, user and app tokens
    re.compile(r"\b(eyJ)[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),  # a JWT (Teams, Entra)
    re.compile(rf"(?i)([?&](?:{_PARAMS})=)[^&\s\"'#]+"),
    re.compile(r"(://[^/\s:@]+:)[^@\s/]+(?=@)"),  # postgresql://user:password@host
)
# An event's value under such a key is a credential whatever it looks like.
_KEYS = re.compile(
    rf"(?i)(?:{_HEADERS}|access_token|refresh_token|id_token|token|client_secret|api_key"
    r"|\w*secret|\w*password)"
)
# The bytes of a request aiohttp quotes in its parse errors: b'…' or b"…".
_QUOTED_BYTES = re.compile(r"""b'(?:[^'\\]|\\.)*'|b"(?:[^"\\]|\\.)*\"""")
# A configured secret shorter than this is no secret worth finding in every line (and would
# match ordinary words).
_SHORTEST_SECRET = 8

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class Redactor:
    """Rewrites text, a structlog event or a traceback with every credential in it redacted."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        known = sorted({s for s in secrets if len(s) >= _SHORTEST_SECRET}, key=len, reverse=True)
        self._secrets = re.compile("|".join(map(re.escape, known))) if known else None

    def text(self, text: str) -> str:
        for pattern in _PATTERNS:
            text = pattern.sub(rf"\g<1>{REDACTED}", text)
        if self._secrets is not None:
            text = self._secrets.sub(REDACTED, text)
        return text

    def exception(self, exc_info: ExcInfo) -> str:
        """The traceback as Python prints it, redacted; the request bytes an aiohttp parse
        error quotes are withheld whole, as nothing in them says which part is a cookie."""
        text = "".join(traceback.format_exception(*exc_info)).rstrip("\n")
        if _parse_error_in(exc_info[1]):
            text = _QUOTED_BYTES.sub(f"b'{REDACTED}'", text)
        return self.text(text)

    def __call__(self, _: WrappedLogger, __: str, event: EventDict) -> EventDict:
        """The structlog processor: every value of the event, nested ones too."""
        return {key: self._value(value, key) for key, value in event.items()}

    def _value(self, value: Any, key: object = None) -> Any:
        if isinstance(key, str) and _KEYS.fullmatch(key) and value:
            return REDACTED
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, dict):
            return {k: self._value(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(v) for v in value]
        # What the renderers would write for it (they repr what is not JSON), redacted.
        return self.text(repr(value))


class RedactingFormatter(logging.Formatter):
    """The standard library's lines (aiohttp's, the MCP SDK's, asyncio's) through ``Redactor``."""

    def __init__(self, redactor: Redactor, fmt: str) -> None:
        super().__init__(fmt)
        self.redactor = redactor

    def formatException(self, ei: Any) -> str:  # noqa: N802 (logging's name)
        kind, value, tb = ei
        if kind is None or value is None:
            return super().formatException(ei)
        return self.redactor.exception((kind, value, tb))

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor.text(super().format(record))


def _parse_error_in(error: BaseException | None) -> bool:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, HttpProcessingError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False
