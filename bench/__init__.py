"""Benchmarks: each figure is measured against a baseline in the same run and printed as a ratio.

``python -m bench`` runs them all; ``python -m bench NAME …`` runs some (``ack``, ``cycle``,
``cards``, ``burst``, ``memory``, ``tokens``). docs/BENCHMARKS.md holds the figures and what
each baseline is.
"""

__all__: list[str] = []
