"""Checks tool arguments against the tool's pydantic model and describes them to the model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from tools.errors import InvalidArgumentsError

__all__ = ["Args", "json_schema", "validate"]

A = TypeVar("A", bound=BaseModel)


class Args(BaseModel):
    """Base of every tool's arguments: unknown fields are an error, not silently dropped.

    Field descriptions are read by the model; write them for it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


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
