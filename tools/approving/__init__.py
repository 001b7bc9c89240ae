"""Deciding one signed card: the only path to a tool's ``execute``.

``checks`` are what stands between a signed card and a decision, ``trail`` the audit lines each
decision leaves, ``approval`` runs a write a person agreed to exactly once (``as_shown`` re-reads
what the card showed, ``sending`` sends a write that leaves the database), and ``decline`` ends a
card without running it.
"""
