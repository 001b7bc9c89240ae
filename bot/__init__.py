"""Countersign's chat side: one platform-neutral core, the surfaces over it, and the command line.

Nothing in ``bot`` knows the merchant domain's SQL, and nothing here performs a write without
an approved card: the core hands tool calls to ``tools.Registry`` and shows what comes back.

The core (modules directly in ``bot``): ``server`` (the composition root), ``services`` (shared
dependencies and the task set), ``adapter`` (the protocol a surface implements), ``placement``
(where a card's copies are), ``receipts``, ``identity``, ``turns``, ``presses``, ``decisions``,
``cardspec`` and ``wording`` (the neutral card), ``settings`` (the only reader of the
environment), ``logging``. Packages: ``agent`` (the model loop), ``slack`` and ``teams`` (the
surfaces), ``sandbox`` (a local Slack), ``cli`` (the ``countersign`` command).
"""

__all__ = ["cli", "logging", "settings"]
