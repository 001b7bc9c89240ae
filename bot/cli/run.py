"""Parses the command line and hands the command over; parsing alone never touches a database.

Exit status: 0 on success, 2 on a usage error (argparse prints it), 1 on an expected failure
(a setting, the database, an unknown email...) with one line on stderr. Bugs keep their
traceback, so they can be reported.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.cli.parser import build_parser

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``countersign`` with ``argv`` (default: the process's arguments).

    Returns:
        The exit status. Usage errors exit with 2 from inside argparse.
    """
    args = build_parser().parse_args(argv)
    # The commands import SQLAlchemy, pydantic and the engine, which takes seconds on a busy
    # machine; importing them after parsing keeps --help and usage errors instant.
    from bot.cli.dispatch import execute

    return execute(args)
