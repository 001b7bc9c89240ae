"""Log lines: JSON for machines, readable for people, with the bound context on each."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog
from structlog.contextvars import bound_contextvars

from bot.runtime.logging import configure_logging


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr does when a person runs the command."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def restored() -> Iterator[None]:
    """Puts structlog's and the root logger's configuration back after the test changes it."""
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        structlog.configure(**saved)
        root.handlers[:] = handlers
        root.setLevel(level)


@pytest.mark.usefixtures("restored")
def test_lines_are_json_objects_with_the_bound_context_when_not_a_terminal() -> None:
    """Piped to a process manager, each line parses alone and carries tenant, person and card."""
    out = io.StringIO()
    configure_logging("INFO", stream=out)
    with bound_contextvars(tenant=1, person=2, card_id="c0ffee"):
        structlog.get_logger("test").info("card_decided", status="done")
    [line] = out.getvalue().splitlines()
    event = json.loads(line)
    assert {k: event[k] for k in ("event", "level", "tenant", "person", "card_id", "status")} == {
        "event": "card_decided",
        "level": "info",
        "tenant": 1,
        "person": 2,
        "card_id": "c0ffee",
        "status": "done",
    }


@pytest.mark.usefixtures("restored")
def test_lines_are_readable_on_a_terminal() -> None:
    """A person watching a terminal gets structlog's console lines, not JSON."""
    out = Terminal()
    configure_logging("INFO", stream=out)
    structlog.get_logger("test").info("card_decided", status="done")
    text = out.getvalue()
    assert "card_decided" in text
    assert not text.lstrip().startswith("{")


class Writes(io.RawIOBase):
    """A raw stream that keeps each write it is given, as a file descriptor sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.calls.append(bytes(data))
        return len(data)


@pytest.mark.usefixtures("restored")
def test_each_line_reaches_the_stream_in_one_write() -> None:
    """Workers share one stderr: a line written in two parts can end up glued to another
    worker's, and neither then parses. Built as Python builds an unbuffered stderr
    (``PYTHONUNBUFFERED``, as containers set it), every write must be one whole line.
    (The standard library's lines are one write already: its handler adds the newline first.)"""
    raw = Writes()
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # type: ignore[arg-type]
    configure_logging("INFO", stream=stream)
    for proposals in range(3):
        structlog.get_logger("test").info("answered", proposals=proposals)
    assert len(raw.calls) == 3, raw.calls
    assert all(call.endswith(b"\n") and call.count(b"\n") == 1 for call in raw.calls), raw.calls
    assert [json.loads(call)["proposals"] for call in raw.calls] == [0, 1, 2]


@pytest.mark.usefixtures("restored")
@pytest.mark.parametrize("stream", [io.StringIO, Terminal], ids=["json", "terminal"])
def test_no_line_or_traceback_holds_a_credential(stream: type[io.StringIO]) -> None:
    """A token in an event, a cookie under its header's name, a configured secret in a
    library's message and a bearer token in an exception's traceback are all written as
    [redacted], in JSON lines and on a terminal alike; the rest of each line stays."""
    out = stream()
    # The root logger as a process starts, without pytest's own capturing handlers on it.
    logging.getLogger().handlers.clear()
    configure_logging("INFO", stream=out, secrets=["signing-secret-0123456789"])
    token = "cs_mcp_" + "T0kenT0kenT0kenT0kenT0kenT0kenT0kenT0kenT0k"
    log = structlog.get_logger("test")
    log.info("mcp_call", note=f"sent {token}", headers={"Cookie": "session=ck_4f9a2b7c"})
    logging.getLogger("somelib").warning("configured with signing-secret-0123456789 today")
    try:
        raise ValueError(f"Authorization: Bearer {token}")
    except ValueError:
        log.exception("mcp_failed")
        logging.getLogger("somelib").exception("failed")
    text = out.getvalue()
    for credential in ("T0kenT0ken", "ck_4f9a2b7c", "signing-secret-0123456789"):
        assert credential not in text, text
    assert text.count("[redacted]") >= 5, text
    assert "mcp_failed" in text and "ValueError: Authorization: [redacted]" in text
    assert "configured with [redacted] today" in text
