"""Answering a message: one turn, as the person, with the model, and the cards it proposed.

``answer`` runs a turn once per message (receipts, identity, the turn lane, the model);
``posting`` posts the cards a turn proposed and records where; ``again`` posts one its killed
turn never did, signed anew from the stored card. The package's surface is the turn's.
"""

from bot.turns.answer import Turn, Typing, answer, post_card, post_edited

__all__ = ["Turn", "Typing", "answer", "post_card", "post_edited"]
