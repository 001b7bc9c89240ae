"""Test support: a throwaway PostgreSQL cluster and per-test databases."""
