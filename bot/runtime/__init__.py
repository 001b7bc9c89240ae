"""How the process runs: lanes, workers, logging, metrics, delivery receipts and turn order.

Nothing here knows a card, a platform or a model: these are the mechanics every surface and
the core run on.
"""

__all__: list[str] = []
