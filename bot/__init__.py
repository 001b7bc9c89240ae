"""The surfaces of Countersign: the command line and the chat front ends over ``tools``.

Nothing in ``bot`` knows the merchant domain's SQL, and nothing here performs a write without
an approved card: surfaces hand tool calls to ``tools.Registry`` and render what comes back.

Subpackages: ``cli`` (the ``countersign`` command), ``settings`` (the only reader of the
environment), ``logging`` (structlog set-up), ``agent`` and ``slack`` (the chat surface).
"""

__all__ = ["cli", "logging", "settings"]
