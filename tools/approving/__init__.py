"""Deciding a signed card: the checks, the approved write run once, rejection and
withdrawal, and the trail each leaves; the only path to a tool's ``execute``."""
