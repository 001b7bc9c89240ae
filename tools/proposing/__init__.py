"""Turning a write the model asked for into a card, and an edit into a new card; never
runs a write."""
