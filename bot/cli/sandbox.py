"""The commands behind `make run`: the local Slack sandbox, or Slack itself when configured; never changes merchant data.

``countersign sandbox`` migrates the database, loads the demo merchants (only into an empty
database), and runs the bot against the local sandbox, printing one line: the page's URL.
``countersign run`` does that with no Slack credentials, and what production does (demo data
for a first look, then ``serve``) with them.
"""

from __future__ import annotations

import argparse
import errno

from bot.cli.commands import demo, reset_demo_data, serve
from bot.cli.failures import CliError
from bot.runtime.logging import configure_logging
from bot.settings import Settings

__all__ = ["run", "sandbox"]


def _announce(line: str) -> None:
    print(line, flush=True)


async def sandbox(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign sandbox``: the bot and a local Slack in the browser, on loopback."""
    from bot.sandbox import run_sandbox
    from bot.server import serve as serve_bot

    if "log_level" not in settings.model_fields_set:
        # The terminal shows the one line with the URL; LOG_LEVEL=INFO brings the bot's log back.
        configure_logging("WARNING")
    await demo(settings, args)
    try:
        await run_sandbox(
            settings,
            serve_bot=serve_bot,
            announce=_announce,
            reset_data=lambda: reset_demo_data(settings),
        )
    except OSError as failed:
        if failed.errno != errno.EADDRINUSE:
            raise
        raise CliError(
            f"No free port from {settings.port} on {settings.countersign_host}: {failed.strerror}. "
            "Please stop another server or set PORT to a free port."
        ) from None
    return ""


async def run(settings: Settings, args: argparse.Namespace) -> str:
    """``countersign run``: the sandbox with nothing configured, else what production serves."""
    if not (settings.slack_enabled or settings.teams_enabled):
        return await sandbox(settings, args)
    _announce(await demo(settings, args))
    return await serve(settings, args)
