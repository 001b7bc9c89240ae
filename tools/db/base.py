"""The declarative base, the tenant-scoped mixin and the column types every table shares."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Dialect, Integer, MetaData
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column
from sqlalchemy.types import TypeDecorator

__all__ = ["Base", "BigId", "TenantScoped", "UTCDateTime"]

# Named constraints keep Alembic migrations identical on SQLite and PostgreSQL.
_NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only autoincrements an INTEGER PRIMARY KEY; PostgreSQL gets a 64-bit key.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every engine.

    SQLite hands back naive datetimes; without this, comparing a stored expiry with
    ``datetime.now(UTC)`` raises ``TypeError`` on SQLite and works on PostgreSQL.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("UTCDateTime needs an aware datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=_NAMING)


class TenantScoped:
    """Rows that belong to one merchant.

    Every ORM statement run in a tenant session (``Database.tenant_session``) is limited to the
    session's tenant, and a new row gets the session's tenant; see ``tools.db.tenancy``.
    """

    @declared_attr
    def tenant_id(cls) -> Mapped[int]:  # noqa: N805 (declared_attr receives the class)
        return mapped_column(Integer, index=True, nullable=False)
