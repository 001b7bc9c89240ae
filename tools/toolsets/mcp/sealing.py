"""Seals a source's literal secrets for the database and opens them when connecting; never logs one.

A header or variable the owner chose to store (``countersign mcp add … --store-secret``) is kept
as a Fernet token, ``{"sealed": "gAAAA…"}``, under a key the database never holds
(``COUNTERSIGN_SECRETS_KEY``, read by the bot's settings and passed down). Anyone with the
database then has ciphertext; the plain value exists only in the process, while it connects.
"""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Sealed", "SecretBox", "UnsealError", "opened"]


class UnsealError(ValueError):
    """A sealed value cannot be opened here: no key is set, or not the one it was sealed with."""


class Sealed(BaseModel):
    """One secret as the database holds it: ciphertext only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sealed: str = Field(min_length=1)


class SecretBox:
    """The keys of ``COUNTERSIGN_SECRETS_KEY``: the first seals, every one opens (rotation)."""

    def __init__(self, keys: Sequence[str]) -> None:
        if not keys:
            raise ValueError("a secret box needs at least one key")
        self._fernet = MultiFernet([Fernet(key.encode()) for key in keys])

    @classmethod
    def of(cls, keys: Sequence[str]) -> SecretBox | None:
        """The box of these keys, or None when none is set."""
        return cls(keys) if keys else None

    def seal(self, value: str) -> Sealed:
        return Sealed(sealed=self._fernet.encrypt(value.encode()).decode())

    def open(self, sealed: Sealed) -> str:
        try:
            return self._fernet.decrypt(sealed.sealed.encode()).decode()
        except InvalidToken:
            raise UnsealError(
                "it was stored encrypted with another key than COUNTERSIGN_SECRETS_KEY holds "
                "here; set the key it was stored with (several may be given, comma-separated)"
            ) from None


def opened(sealed: Sealed, box: SecretBox | None) -> str:
    """The plain value of ``sealed``; ``UnsealError`` saying what to set when it cannot be."""
    if box is None:
        raise UnsealError(
            "it is stored encrypted and COUNTERSIGN_SECRETS_KEY is not set where Countersign "
            "runs; set it to the key it was stored with"
        )
    return box.open(sealed)
