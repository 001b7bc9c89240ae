"""The tables of agents connected by OAuth: clients, consents, grants and their tokens; never queries them.

Only hashes of anything a client could send are kept (the consent's request handle, the
authorization code, access and refresh tokens), so a copy of the database holds nothing an
agent could use. A grant's rows stay after it is revoked, for the audit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from tools.db import Base, UTCDateTime

__all__ = ["ConsentRow", "GrantRow", "GrantTokenRow", "OAuthClientRow"]


class OAuthClientRow(Base):
    """A client registered dynamically (RFC 7591): its metadata as it registered it."""

    __tablename__ = "oauth_clients"

    client_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSON)
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ConsentRow(Base):
    """One authorization request, from the page's first visit to the code it ends in.

    ``status``: new (no email yet), asked (a card is out, or a decoy for an unknown email),
    allowed, denied, redeemed (the code was handed to the browser).
    """

    __tablename__ = "oauth_consents"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # SHA-256 of the handle
    client_id: Mapped[str] = mapped_column(String(2000))
    # The name the client gave (its registration's or its metadata document's), as cards show it.
    client_name: Mapped[str] = mapped_column(String(100))
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    state: Mapped[str | None] = mapped_column(String(2000))
    code_challenge: Mapped[str] = mapped_column(String(128))
    resource: Mapped[str] = mapped_column(String(2000))
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status: Mapped[str] = mapped_column(String(20))
    short_code: Mapped[str | None] = mapped_column(String(16))
    tenant_id: Mapped[int | None] = mapped_column(Integer)
    person_id: Mapped[int | None] = mapped_column(Integer)
    asked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The hash of the cookie of the browser that typed the email: only it is told the code.
    browser: Mapped[str | None] = mapped_column(String(64))
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    code_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    code_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class GrantRow(Base):
    """A person's allowing one client at one merchant: what its tokens mean."""

    __tablename__ = "oauth_grants"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[int] = mapped_column(Integer, index=True)
    person_id: Mapped[int] = mapped_column(Integer)
    client_id: Mapped[str] = mapped_column(String(2000))
    client_name: Mapped[str] = mapped_column(String(100))
    resource: Mapped[str] = mapped_column(String(2000))
    consent_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class GrantTokenRow(Base):
    """An access or refresh token of a grant, by its hash; a refresh token is used once."""

    __tablename__ = "oauth_tokens"

    hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    grant_id: Mapped[str] = mapped_column(
        ForeignKey("oauth_grants.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(10))  # access | refresh
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
