"""Turning a write the model asked for into a card, and an edit into a new card; never runs a write.

``write`` is the proposing half of a write tool (resolve, route, seal, store, audit);
``editing`` proposes a card again with a person's changes, checked as a press on the card.
"""
