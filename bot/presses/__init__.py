"""What a press does: the ladder that decides it, the showing of the decision, copies, sweeps.

``ladder`` decides a press of Approve, Reject, Edit or Withdraw on any surface; ``decisions``
shows what the engine decided (every copy updated, one audit line); ``copies`` sends the
people a card is issued to their private copy; ``sweeps`` moves cards on without a press
(expiry, escalation, a decision never shown). The package's surface is the ladder's.
"""

from bot.presses.ladder import DATABASE_DOWN, Ended, Ending, Press, Verdict, decide

__all__ = ["DATABASE_DOWN", "Ended", "Ending", "Press", "Verdict", "decide"]
