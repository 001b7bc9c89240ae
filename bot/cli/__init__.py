"""The ``countersign`` command line: migrate, load demo data, link people, read the audit, serve.

``main`` is the console script's entry point (``countersign = "bot.cli:main"``) and what
``python -m bot`` runs. The package never reads the environment itself; ``bot.settings`` does.
"""

from __future__ import annotations

from bot.cli.run import main

__all__ = ["main"]
