"""A pydantic arguments model for an MCP tool, built from the JSON schema its server lists.

The engine validates, seals and digests arguments as a pydantic model (``tools.schema``); an MCP
tool brings a JSON schema instead. Each top-level property becomes a field (so Edit can name it
and the card can list it), and the whole schema is checked with ``jsonschema`` on top, so a
nested constraint the fields cannot express still holds before anything is proposed or sent.

What is stored, digested, shown and sent is one dict: the values given, without the optional
ones left out (``None`` is never sent: a server's schema rarely accepts ``null`` for an optional
argument). A property the server adds later therefore leaves a waiting card's digest as it was.
"""

from __future__ import annotations

import keyword
from typing import Any, ClassVar

import jsonschema
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    create_model,
    model_serializer,
    model_validator,
)

from tools.schema import Args

__all__ = ["McpArgs", "arguments_model", "sent"]

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": int | float,  # 5 stays 5 and 7800.5 stays 7800.5: what is shown is what is sent
    "boolean": bool,
    "array": list[Any],
    "object": dict[str, Any],
}


class McpArgs(Args):
    """Base of every MCP tool's arguments; ``_validator`` is the tool's whole JSON schema."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_by_name=True, serialize_by_alias=True
    )
    _validator: ClassVar[Any] = None

    @model_serializer(mode="wrap")
    def _given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {key: value for key, value in dumped.items() if value is not None}

    @model_validator(mode="after")
    def _whole_schema(self) -> McpArgs:
        validator = type(self)._validator
        if validator is not None:
            problem = jsonschema.exceptions.best_match(validator.iter_errors(sent(self)))
            if problem is not None:
                where = ".".join(str(part) for part in problem.absolute_path) or "the arguments"
                raise ValueError(f"{where}: {problem.message}")
        return self


class _Unlisted(McpArgs):
    """The arguments of a tool its server no longer lists: kept exactly as they were sealed."""

    model_config = ConfigDict(extra="allow", frozen=True)


def sent(args: BaseModel) -> dict[str, Any]:
    """The arguments exactly as they go to the server (and as the card lists them)."""
    return args.model_dump(mode="json")


def arguments_model(name: str, schema: dict[str, Any] | None) -> type[McpArgs]:
    """The arguments model of a tool with this input schema (None: the tool is not listed)."""
    if schema is None:
        return _Unlisted
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = set(schema.get("required") or ())
    fields: dict[str, Any] = {}
    for index, (key, given) in enumerate(properties.items()):
        spec = given if isinstance(given, dict) else {}
        named = spec.get("type")
        kind: Any = _TYPES.get(named, Any) if isinstance(named, str) else Any
        described = str(spec.get("description") or "")[:1000] or None
        if key in required:
            annotation, default = kind, ...
        else:
            annotation, default = kind | None, None
        attribute = key if _plain(key) else f"arg_{index}"
        fields[attribute] = (
            annotation,
            Field(default, alias=key if attribute != key else None, description=described),
        )
    model = create_model(f"{_class_name(name)}Args", __base__=McpArgs, **fields)
    model._validator = _validator_of(schema)
    return model


def _validator_of(schema: dict[str, Any]) -> Any:
    try:
        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        return kind(schema)
    except jsonschema.exceptions.SchemaError:
        return None  # a schema its own validator rejects: the fields' types still hold


def _plain(key: str) -> bool:
    """Whether a property can be a pydantic field under its own name."""
    return (
        key.isidentifier()
        and not keyword.iskeyword(key)
        and not key.startswith("_")
        and not key.startswith("model_")
        and not hasattr(BaseModel, key)
    )


def _class_name(name: str) -> str:
    return (
        "".join(part.capitalize() for part in name.replace("-", "_").split("_") if part) or "Tool"
    )
