"""The merchants (tenants), their people and linked chat identities as tables; never queries them.

These are the engine's, not the merchant toolset's: the identity directory maps a chat user to a
person without knowing anything of branches or orders. ``tools.toolsets.merchant.models`` re-exports
them, so the schema (the same three tables) and every import of them are unchanged.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from tools.db import Base, TenantScoped, UTCDateTime

__all__ = ["Identity", "Person", "Tenant"]


class Tenant(Base):
    """A merchant. Not tenant-scoped itself: it *is* the scope."""

    __tablename__ = "tenants"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    currency: Mapped[str] = mapped_column(String(3))
    # A Babel locale for money and dates, e.g. en_IN, en_US.
    locale: Mapped[str] = mapped_column(String(20), default="en_US")
    # The IANA zone whose days "today", "this week" and a sales day are, e.g. Asia/Kolkata.
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC", server_default="UTC")


class Person(TenantScoped, Base):
    __tablename__ = "people"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(320), unique=True)
    role: Mapped[str] = mapped_column(String(20))


class Identity(Base):
    """A chat identity linked to a person: (platform, installation, platform user) → person.

    The installation is the workspace or organisation the app is installed in, never the
    clicker's own team, which differs in shared channels.
    """

    __tablename__ = "identities"
    __table_args__ = (UniqueConstraint("platform", "installation", "platform_user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(20))
    installation: Mapped[str] = mapped_column(String(100))
    platform_user_id: Mapped[str] = mapped_column(String(100))
    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"))
    linked_at: Mapped[datetime] = mapped_column(UTCDateTime)
