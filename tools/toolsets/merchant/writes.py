"""Write tools over a merchant's data: each only proposes a card; a person's approval runs it.

Every tool here is built with ``tools.proposing.write.write_tool``; the modules hold one area each.
"""

from __future__ import annotations

from tools.tool import Tool
from tools.toolsets.merchant.writes_branches import CLOSE_BRANCH, REOPEN_BRANCH
from tools.toolsets.merchant.writes_catalog import ADJUST_STOCK, SET_PRICE
from tools.toolsets.merchant.writes_orders import REFUND_ORDER
from tools.toolsets.merchant.writes_requests import APPROVE_REQUEST, REJECT_REQUEST

__all__ = ["WRITE_TOOLS"]

WRITE_TOOLS: list[Tool] = [
    APPROVE_REQUEST,
    REJECT_REQUEST,
    CLOSE_BRANCH,
    REOPEN_BRANCH,
    REFUND_ORDER,
    ADJUST_STOCK,
    SET_PRICE,
]
