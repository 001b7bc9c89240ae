"""The merchant's data: tenants, people, branches, requests, orders, products and stock.

Money is always integer minor units (paise, cents) with the tenant's ISO currency; see
``tools.toolsets.merchant.money`` for display. Every table but ``tenants`` and ``identities`` is
tenant-scoped, so a tenant session only ever sees its own rows.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from tools.db import Base, TenantScoped, UTCDateTime

# Tenants, people and their chat identities are the engine's (the identity directory needs them
# without the merchant domain); re-exported here so the merchant code reads as before.
from tools.people.tables import Identity, Person, Tenant

__all__ = [
    "Branch",
    "BranchRequest",
    "BranchStatus",
    "Identity",
    "Order",
    "OrderStatus",
    "Person",
    "PriceChange",
    "Product",
    "Refund",
    "RequestKind",
    "RequestStatus",
    "Stock",
    "StockMovement",
    "Tenant",
]


class BranchStatus(StrEnum):
    OPEN = "open"
    CLOSED = "closed"


class RequestKind(StrEnum):
    STOCK = "stock"
    REFUND = "refund"
    DISCOUNT = "discount"
    EXPENSE = "expense"


class RequestStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


class OrderStatus(StrEnum):
    OPEN = "open"
    FULFILLED = "fulfilled"
    CANCELLED = "cancelled"
    REFUNDED = "refunded"


class Branch(TenantScoped, Base):
    __tablename__ = "branches"
    __table_args__ = (UniqueConstraint("tenant_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    city: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20), default=BranchStatus.OPEN)
    status_changed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class BranchRequest(TenantScoped, Base):
    """Something a branch asked for that waits on a manager's decision."""

    __tablename__ = "branch_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    branch_id: Mapped[int] = mapped_column(ForeignKey("branches.id"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    amount: Mapped[int] = mapped_column(BigInteger)
    requested_by: Mapped[int] = mapped_column(ForeignKey("people.id"))
    reason: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20), default=RequestStatus.PENDING, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    decided_by: Mapped[int | None] = mapped_column(ForeignKey("people.id"))
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    decision_note: Mapped[str | None] = mapped_column(Text)
    # The approval card that decided it: the write's idempotency key.
    decided_card_id: Mapped[str | None] = mapped_column(String(32), unique=True)

    branch: Mapped[Branch] = relationship(lazy="raise")
    requester: Mapped[Person] = relationship(foreign_keys=[requested_by], lazy="raise")
    decider: Mapped[Person | None] = relationship(foreign_keys=[decided_by], lazy="raise")


class Order(TenantScoped, Base):
    __tablename__ = "orders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    branch_id: Mapped[int] = mapped_column(ForeignKey("branches.id"), index=True)
    customer: Mapped[str] = mapped_column(String(200))
    total: Mapped[int] = mapped_column(BigInteger)
    refunded: Mapped[int] = mapped_column(BigInteger, default=0)
    status: Mapped[str] = mapped_column(String(20), default=OrderStatus.OPEN)
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, index=True)

    branch: Mapped[Branch] = relationship(lazy="raise")


class Refund(TenantScoped, Base):
    """One refund paid against an order; the card id makes a second run of one card impossible."""

    __tablename__ = "refunds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id"), index=True)
    amount: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(Text, default="")
    approved_by: Mapped[int] = mapped_column(ForeignKey("people.id"))
    card_id: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Product(TenantScoped, Base):
    __tablename__ = "products"
    __table_args__ = (UniqueConstraint("tenant_id", "sku"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sku: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200))
    price: Mapped[int] = mapped_column(BigInteger)


class Stock(TenantScoped, Base):
    __tablename__ = "stock"
    __table_args__ = (UniqueConstraint("branch_id", "product_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    branch_id: Mapped[int] = mapped_column(ForeignKey("branches.id"), index=True)
    product_id: Mapped[int] = mapped_column(ForeignKey("products.id"), index=True)
    quantity: Mapped[int] = mapped_column(Integer, default=0)

    branch: Mapped[Branch] = relationship(lazy="raise")
    product: Mapped[Product] = relationship(lazy="raise")


class StockMovement(TenantScoped, Base):
    """A ledger line for every approved stock adjustment."""

    __tablename__ = "stock_movements"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    stock_id: Mapped[int] = mapped_column(ForeignKey("stock.id"), index=True)
    delta: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    approved_by: Mapped[int] = mapped_column(ForeignKey("people.id"))
    card_id: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PriceChange(TenantScoped, Base):
    """A ledger line for every approved price change."""

    __tablename__ = "price_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    product_id: Mapped[int] = mapped_column(ForeignKey("products.id"), index=True)
    old_price: Mapped[int] = mapped_column(BigInteger)
    new_price: Mapped[int] = mapped_column(BigInteger)
    approved_by: Mapped[int] = mapped_column(ForeignKey("people.id"))
    card_id: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
