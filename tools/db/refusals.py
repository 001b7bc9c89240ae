"""Tells a statement the database refused from a database that could not be reached; never retries.

A lost connection, a locked or stopped database: the statement never ran, and pressing again
later may work. A refused statement: the database ran it and said no (a value its column cannot
hold, a duplicate of a unique value), and it will say no again, however often it is sent. The
two are told apart by the SQLSTATE class where the driver gives one (asyncpg: 08 is a lost
connection, 22 a data exception, 23 an integrity constraint violation) and by SQLAlchemy's own
classes otherwise (SQLite names no SQLSTATE).
"""

from __future__ import annotations

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError

__all__ = ["refusal"]

# Why, in words a person reads on the card: by SQLSTATE, then by its class.
_BY_STATE = {
    "23505": "it would repeat a value that must be unique",
    "23503": "it refers to something that is no longer there",
    "23502": "a value it needs is missing",
    "22001": "a text in it is too long",
}
_BY_CLASS = {
    "22": "a value in it does not fit what the database can store",
    "23": "it conflicts with the data already there",
}
# SQLite's words for the same refusals, at the start of its IntegrityError's message.
_SQLITE = {
    "UNIQUE": _BY_STATE["23505"],
    "FOREIGN KEY": _BY_STATE["23503"],
    "NOT NULL": _BY_STATE["23502"],
}


def refusal(error: BaseException) -> str | None:
    """Why the database refused the statement, in words; None when it did not refuse one."""
    if not isinstance(error, DBAPIError) or error.connection_invalidated:
        return None
    state = getattr(error.orig, "sqlstate", None)
    if isinstance(state, str) and state[:2] in _BY_CLASS:
        return _BY_STATE.get(state, _BY_CLASS[state[:2]])
    if isinstance(error, IntegrityError):
        said = str(error.orig)
        return next((why for key, why in _SQLITE.items() if said.startswith(key)), _BY_CLASS["23"])
    if isinstance(error, DataError):
        return _BY_CLASS["22"]
    return None
