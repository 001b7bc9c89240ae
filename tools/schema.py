"""Checks tool arguments against the tool's pydantic model and describes them to the model."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from tools.errors import InvalidArgumentsError

__all__ = [
    "MAX_AMOUNT",
    "MAX_ID",
    "MAX_MINOR",
    "Amount",
    "Args",
    "RowId",
    "json_schema",
    "validate",
]

A = TypeVar("A", bound=BaseModel)

# The bounds of what a person or a model may type, for every tool's arguments to share. Before
# them, "approve request 99999999999999999999" overflowed in SQLite's driver and was refused by
# PostgreSQL with a driver error (ids there are 32-bit), a 400-digit refund or price did the
# same, and "1e400" typed into the Edit modal answered 500 because babel could not format it:
# each a traceback where a person should read what is wrong.
#
# Every id is a 32-bit INTEGER primary key.
MAX_ID = 2**31 - 1
# Money is stored as integer minor units (paise, cents) in 64-bit BIGINT columns.
MAX_MINOR = 2**63 - 1
# An amount in major units, in any currency: ISO 4217 currencies have at most four decimals, so
# 10**12 of them is at most 10**16 minor units, well within the column, and within the 28
# digits babel formats money with.
MAX_AMOUNT = Decimal(10**12)

RowId = Annotated[int, Field(ge=1, le=MAX_ID)]
"""An id of a row: a request, an order, a branch."""

Amount = Annotated[Decimal, Field(gt=0, le=MAX_AMOUNT, allow_inf_nan=False)]
"""An amount of money in major units (the tenant's currency checks its decimals)."""


class Args(BaseModel):
    """Base of every tool's arguments: unknown fields are an error, not silently dropped.

    Field descriptions are read by the model; write them for it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _storable_text(cls, value: Any) -> Any:
        """Refuses text no database column can hold, before any tool reads it.

        A NUL character (U+0000, which a Slack payload or a model can carry) reached
        PostgreSQL inside a SKU and came back as a driver error: the turn crashed instead of
        saying what was wrong. A lone surrogate (U+D800) cannot even be encoded to send.
        """
        if _unstorable(value):
            raise PydanticCustomError(
                "unstorable_text", "it contains a character that cannot be stored; type it again"
            )
        return value


def _unstorable(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value or any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, list | tuple):
        return any(_unstorable(item) for item in value)
    if isinstance(value, dict):
        return any(_unstorable(k) or _unstorable(v) for k, v in value.items())
    return False


def validate(tool: str, model: type[A], args: Mapping[str, Any] | BaseModel) -> A:
    """Runs raw or round-tripped arguments through the schema; the result has the declared types.

    This is also what turns JSON's ``41.0`` back into the int ``41`` for a card that went to the
    database and back: strict-in-shape, lax-in-number, exactly as on the way in.
    """
    raw = args.model_dump(mode="json") if isinstance(args, BaseModel) else dict(args)
    try:
        return model.model_validate(raw)
    except ValidationError as invalid:
        raise InvalidArgumentsError.from_validation(tool, invalid.errors()) from invalid


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema the model sees for a tool's arguments."""
    return model.model_json_schema()
