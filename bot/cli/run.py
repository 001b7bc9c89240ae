"""Parses the command line and hands the command over; parsing alone never touches a database.

Exit status: 0 on success, 2 on a usage error (argparse prints it), 1 on an expected failure
(a setting, the database, an unknown email...) with one line on stderr, 130 when Ctrl-C stops a
command half-way. Stopping a server (`serve`, `sandbox`, `run`) with Ctrl-C or SIGTERM is how
it is meant to end: 0. Bugs keep their traceback, so they can be reported.
"""

from __future__ import annotations

import gc
import signal
from collections.abc import Sequence

from bot.cli.parser import build_parser

__all__ = ["main"]

# Ctrl-C's conventional exit status (128 + SIGINT).
_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``countersign`` with ``argv`` (default: the process's arguments).

    This is the process's entry point: once the command is over it ignores further SIGINT and
    SIGTERM, so that nothing but the returned status decides how the process ends.

    Returns:
        The exit status. Usage errors exit with 2 from inside argparse.
    """
    args = build_parser().parse_args(argv)
    # What the imports build lives until the process ends, so the collector's passes over it
    # while importing were wasted: a third of the start-up's CPU.
    gc.disable()
    try:
        # The commands import SQLAlchemy, pydantic and the engine, which takes seconds on a
        # busy machine; importing them after parsing keeps --help and usage errors instant.
        from bot.cli.dispatch import execute
    except KeyboardInterrupt:
        return _INTERRUPTED  # Ctrl-C while starting: nothing ran, no traceback to read
    finally:
        gc.freeze()  # never collected: they were never garbage, and later passes skip them
        gc.enable()
    status = execute(args)
    _ignore_stop_signals()
    # Python's last collection at exit walked every object the command left: a second or more
    # after a `countersign` command had printed its answer (four after a server stopped, on a
    # busy machine). The process is ending; the memory goes back with it, uncollected.
    gc.freeze()
    return status


def _ignore_stop_signals() -> None:
    # The command is over and its status decided; only Python's teardown is left. A second
    # Ctrl-C or SIGTERM arriving now would kill the process by signal and lose that status:
    # `uv run` forwards the terminal's Ctrl-C to us again 0.2 s after the terminal did, and
    # `make run` then printed "Error 130" after a clean stop. Ignored signals stay ignored
    # through the interpreter's shutdown.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
