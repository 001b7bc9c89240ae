"""How a merchant connected one MCP server: where it is, what to trust, and each tool's rules.

Stored as JSON beside the merchant (``tools.toolsets.mcp.store``). Nothing here connects: a header
written ``$VAR`` stays ``$VAR`` in the store and is read from the environment only when a
connection is opened (``headers_now``), so a secret never lands in the database
(``Bearer ${TOKEN}`` works too). A value the owner chose to store is sealed
(``tools.toolsets.mcp.sealing``) and opened only there too.
"""

from __future__ import annotations

import os
import re
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools.caller import Role
from tools.tool import Scope
from tools.toolsets.mcp.sealing import Sealed, SecretBox, UnsealError, opened
from tools.toolsets.mcp.sentence import placeholders

__all__ = [
    "IDEMPOTENCY_KEY",
    "SOURCE_NAME",
    "MissingSecretError",
    "Preview",
    "SourceConfig",
    "ToolRule",
    "model_name",
]

# The request ``_meta`` key that carries a card's id on the one ``tools/call`` its approval
# sends. Reverse-DNS as the spec asks of ``_meta`` prefixes; a server dedupes on it.
IDEMPOTENCY_KEY = "dev.countersign/idempotency-key"

# Lower-case letters, digits and hyphens: never an underscore, so "<source>__<tool>" splits one
# way only and can never equal a reference tool's name (none has a double underscore).
SOURCE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
# "$TOKEN" or "Bearer ${TOKEN}": read from the environment when connecting.
_ENV_REF = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))"
)
_SEPARATOR = "__"
# A model's tool name: OpenAI and Anthropic both take ^[a-zA-Z0-9_-]{1,64}$.
_MODEL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class MissingSecretError(ValueError):
    """A header names an environment variable that is not set where the server connects."""


def model_name(source: str, tool: str) -> str | None:
    """The name the model sees for a source's tool, or None when no model could call it."""
    name = f"{source}{_SEPARATOR}{tool}"
    return name if _MODEL_NAME.match(name) else None


class Preview(BaseModel):
    """How a server says what a call would do without doing it: a dry-run argument set to true
    (``dry_run``, e.g. the filesystem server's ``dryRun``) or a companion read tool called with
    the same arguments (``tool``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["dry_run", "tool"]
    name: str = Field(min_length=1, max_length=64)


class ToolRule(BaseModel):
    """What the owner said about one tool. Every field is optional; absent means the default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --read / --write: the owner's word, above any annotation.
    scope: Scope | None = None
    role: Role | None = None
    # The argument that is the amount (for the two-approver threshold), in the merchant's
    # currency: ``major`` units (7800.50) or ``minor`` ones (780050).
    amount: str | None = None
    unit: Literal["major", "minor"] = "major"
    # The arguments that name what the write changes: one live card per target.
    targets: tuple[str, ...] = ()
    # The arguments a person the card is issued to may change before approving.
    editable: tuple[str, ...] = ()
    preview: Preview | None = None
    # The card's sentence, written by the owner: "Pay {amount} to {supplier_id}", each
    # placeholder an argument's name (``tools.toolsets.mcp.sentence``).
    sentence: str | None = Field(default=None, min_length=1, max_length=300)

    @field_validator("sentence")
    @classmethod
    def _sentence(cls, sentence: str | None) -> str | None:
        if sentence is not None:
            placeholders(sentence)
        return sentence

    def merged(self, other: ToolRule) -> ToolRule:
        """This rule with what ``other`` sets on top."""
        return self.model_copy(update=other.model_dump(exclude_unset=True))


class SourceConfig(BaseModel):
    """One MCP server of one merchant: streamable HTTP (``url``) or stdio (``command``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    url: str | None = None
    # Each value a ``$VAR`` template, a literal, or sealed (stored encrypted, opened to connect).
    headers: dict[str, str | Sealed] = Field(default_factory=dict)
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str | Sealed] = Field(default_factory=dict)
    # The owner's recorded choice to let the server's ``readOnlyHint`` decide what is a read.
    trust_annotations: bool = False
    # Seconds one request may take before it is given up (a write then: "outcome unknown").
    timeout: float = Field(default=30.0, gt=0, le=600)
    rules: dict[str, ToolRule] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not SOURCE_NAME.match(name):
            raise ValueError(
                f"{name!r} cannot name a server: use 1 to 20 lower-case letters, digits and "
                "hyphens, starting with a letter (e.g. ledger, shop-api)"
            )
        return name

    @field_validator("headers", "env")
    @classmethod
    def _headers(cls, headers: dict[str, str | Sealed]) -> dict[str, str | Sealed]:
        for key, value in headers.items():
            if not _HEADER_NAME.match(key):
                raise ValueError(f"{key!r} is not a header or variable name")
            if isinstance(value, str) and "$" in _ENV_REF.sub("", value):
                raise ValueError(f"{value!r}: write an environment variable as $NAME or ${{NAME}}")
        return headers

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.url is None) == (self.command is None):
            raise ValueError("give the server either --url URL or -- COMMAND [ARGS…], not both")
        if self.url is not None and not re.match(r"^https?://[^\s/]+", self.url):
            raise ValueError(f"{self.url!r} is not an http:// or https:// URL")
        if self.command is None and (self.args or self.env):
            raise ValueError("arguments and environment belong to a stdio server")
        if self.url is None and self.headers:
            raise ValueError("headers belong to an HTTP server")
        return self

    @property
    def transport(self) -> Literal["http", "stdio"]:
        return "http" if self.url is not None else "stdio"

    @property
    def where(self) -> str:
        """Where it is, as a person reads it (never a header's value)."""
        if self.url is not None:
            return self.url
        return " ".join([os.path.basename(self.command or ""), *self.args])

    def rule(self, tool: str) -> ToolRule:
        return self.rules.get(tool, ToolRule())

    def with_rules(self, rules: dict[str, ToolRule]) -> SourceConfig:
        """This source with ``rules`` laid over its own, tool by tool."""
        merged = dict(self.rules)
        for tool, rule in rules.items():
            merged[tool] = merged[tool].merged(rule) if tool in merged else rule
        return self.model_copy(update={"rules": merged})

    def headers_now(self, box: SecretBox | None = None) -> dict[str, str]:
        """The headers to send, with every ``$VAR`` read from the environment now and every
        sealed value opened with ``box``."""
        return {key: _now("header", key, value, box) for key, value in self.headers.items()}

    def env_now(self, box: SecretBox | None = None) -> dict[str, str]:
        """The stdio server's environment additions, with every ``$VAR`` read now and every
        sealed value opened with ``box``."""
        return {key: _now("variable", key, value, box) for key, value in self.env.items()}


def _now(kind: str, key: str, value: str | Sealed, box: SecretBox | None) -> str:
    if isinstance(value, str):
        return _resolved(value)
    try:
        return opened(value, box)
    except UnsealError as closed:
        raise MissingSecretError(f"the {kind} {key} cannot be read: {closed}") from None


def _resolved(value: str) -> str:
    def read(ref: re.Match[str]) -> str:
        name = ref["braced"] or ref["bare"]
        found = os.environ.get(name)
        if found is None:
            raise MissingSecretError(
                f"the environment variable {name} is not set; set it where Countersign runs"
            )
        return found

    return _ENV_REF.sub(read, value)
