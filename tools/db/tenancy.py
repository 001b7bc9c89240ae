"""Limits every ORM statement of a tenant session to that tenant; never widens a query.

Tools do not add ``WHERE tenant_id = …`` themselves: a forgotten filter would show one merchant
another's orders. Instead the session carries its tenant in ``session.info`` and every ORM
SELECT, UPDATE and DELETE (relationship loads included) gets the criterion added here.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import ORMExecuteState, Session, with_loader_criteria

from tools.db.base import TenantScoped

__all__ = ["TENANT_KEY", "CrossTenantWriteError"]

TENANT_KEY = "countersign.tenantid"


class CrossTenantWriteError(RuntimeError):
    """A tool tried to store a row for another tenant; this is a bug, never a user error."""


@event.listens_for(Session, "do_orm_execute")
def _scope_statement(state: ORMExecuteState) -> None:
    tenantid = state.session.info.get(TENANT_KEY)
    if tenantid is None:
        return
    if state.is_select or state.is_update or state.is_delete:
        state.statement = state.statement.options(
            with_loader_criteria(
                TenantScoped,
                lambda cls: cls.tenant_id == tenantid,
                include_aliases=True,
            )
        )


@event.listens_for(Session, "before_flush")
def _stamp_new_rows(session: Session, flush_context: Any, instances: Any) -> None:
    tenantid = session.info.get(TENANT_KEY)
    if tenantid is None:
        return
    for obj in list(session.new) + list(session.dirty):
        if not isinstance(obj, TenantScoped):
            continue
        current: int | None = obj.tenant_id  # unset on a new row until the flush fills it
        if current is None:
            obj.tenant_id = tenantid
        elif current != tenantid:
            raise CrossTenantWriteError(
                f"{type(obj).__name__} for tenant {obj.tenant_id} in a session of tenant {tenantid}"
            )
