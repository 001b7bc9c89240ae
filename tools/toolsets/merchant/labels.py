"""How a branch request's fields and kinds read to a person, on its card and in an answer alike; never formats a value.

One place, so "show request 1" and request 1's card say the same words: the answer said "Kind:
stock", "Requested by" and "Reason" where the card said "stock purchase", "Asked by" and
"Their reason".
"""

from __future__ import annotations

from typing import Final

__all__ = ["KIND_WORDS", "REQUEST_LABELS", "kind_words"]

# How each kind of request reads in "a ₹5,000.00 discount".
KIND_WORDS: Final = {
    "stock": "stock purchase",
    "refund": "refund",
    "discount": "discount",
    "expense": "expense",
}

# A request row's fields as a person reads them (``tools.tool.Result.labels``): the field's
# label, and "kind=<kind>" for each kind's words.
REQUEST_LABELS: Final = {
    "requested_by": "Asked by",
    "reason": "Their reason",
    **{f"kind={kind}": words for kind, words in KIND_WORDS.items()},
}


def kind_words(kind: str) -> str:
    return KIND_WORDS.get(kind, kind)
