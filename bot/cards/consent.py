"""What a consent card says, surface-neutral, and the surfaces that can post one; never decides a press.

A consent card asks one person whether an agent may connect as them: it names the client
(its name and its host), the merchant, and the short code the authorization page shows, with
Allow and Deny. Each button carries its own signed value (``tools.ConsentSigner``), which
can answer this consent and approve nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["ConsentCard", "ConsentPoster"]


@dataclass(frozen=True, slots=True)
class ConsentCard:
    """One consent to ask: who connects, to which merchant, the code, the two buttons' values."""

    client_name: str
    client_host: str
    merchant: str
    code: str
    allow: str
    deny: str


@runtime_checkable
class ConsentPoster(Protocol):
    """A surface's adapter that can post a consent card in a person's own DM (1:1 chat)."""

    async def post_consent(self, user: str, card: ConsentCard) -> bool:
        """Posts ``card`` in ``user``'s DM with the app; False when the platform refused it."""
        ...
