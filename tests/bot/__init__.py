"""Tests of the surfaces in ``bot``."""
