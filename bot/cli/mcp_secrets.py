"""Keeps a secret written out in ``mcp add`` or ``mcp import`` out of the database as typed.

A literal header value, or an env value that looks like a credential, is refused with the
``${VAR}`` way to give it instead and the line that puts it in the environment; with
``--store-secret`` it is stored encrypted (``COUNTERSIGN_SECRETS_KEY``) and opened only when
connecting. The value itself is never repeated: what is printed may stay in a scrollback.

Without this, an import of a Claude Desktop file stores its literal header and ``env`` values
in ``mcp_sources.config`` in plain text: ``mcp list`` shows ``(set)``, but anyone with the
database has them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.cli.failures import CliError
from bot.cli.mcp_import import Imported
from bot.cli.mcp_options import SCHEME, looks_secret, written_as_variables
from bot.settings import SECRETS_KEY_HELP, Settings
from tools.toolsets.mcp import Sealed, SecretBox, SourceConfig

__all__ = [
    "Written",
    "kept_import",
    "refused_lines",
    "sealed",
    "secrets_box",
    "stored_lines",
    "written_secrets",
]

Kind = Literal["header", "env"]


@dataclass(frozen=True, slots=True)
class Written:
    """A secret written out in a header or an env value: its name and the ``${VAR}`` way."""

    kind: Kind
    name: str
    variable: str
    scheme: str  # "Bearer " when the value was "Bearer …", kept in front of the variable

    @property
    def option(self) -> str:
        """How to give it instead: ``--header 'Authorization=Bearer ${SHOP_AUTHORIZATION}'``."""
        flag = "--header" if self.kind == "header" else "--env"
        return f"{flag} '{self.name}={self.scheme}${{{self.variable}}}'"

    @property
    def export(self) -> str:
        """The line that puts it in the environment (the value itself is never repeated)."""
        after = f", after {self.scheme.strip()!r}" if self.scheme else ""
        return f"export {self.variable}='…'   (the {self.kind} {self.name}'s value{after})"


def written_secrets(config: SourceConfig) -> list[Written]:
    """Each secret written out: every literal header value (headers are how a server is told
    who calls it) and each env value that looks like a credential; sealed ones are kept."""
    found: list[Written] = []
    kinds: tuple[tuple[Kind, Mapping[str, str | Sealed]], ...] = (
        ("header", config.headers),
        ("env", config.env),
    )
    for kind, values in kinds:
        for name, value in values.items():
            if isinstance(value, Sealed) or written_as_variables(value):
                continue
            if kind == "env" and not looks_secret(name, value):
                continue
            scheme = SCHEME.match(value)
            variable = re.sub(r"[^A-Z0-9]+", "_", f"{config.name}_{name}".upper()).strip("_")
            found.append(Written(kind, name, variable, f"{scheme.group(1)} " if scheme else ""))
    return found


def refused_lines(source: str, written: Sequence[Written], *, command: str) -> list[str]:
    """What to do instead of storing ``written`` as typed, one step a line; ``command`` is what
    takes the ``${VAR}`` options ("mcp add")."""
    names = ", ".join(f"the {w.kind} {w.name}" for w in written)
    return [
        f"{source}: {names} holds a secret written out. Countersign does not store a secret "
        "as written: anyone with the database would have it. Put it in the environment where "
        "Countersign runs:",
        *(f"  {w.export}" for w in written),
        f"and give it to {command} as (in single quotes, so the shell leaves it alone):",
        *(f"  {w.option}" for w in written),
        "or add --store-secret to store it encrypted with COUNTERSIGN_SECRETS_KEY.",
    ]


def stored_lines(source: str, written: Sequence[Written]) -> list[str]:
    names = ", ".join(f"the {w.kind} {w.name}" for w in written)
    return [
        f"Stored {names} of {source} encrypted with COUNTERSIGN_SECRETS_KEY: the database "
        "holds only ciphertext, opened when connecting. Keep that key: without it, where "
        f"Countersign runs, {source} cannot be connected."
    ]


def secrets_box(settings: Settings, *, store: bool = False) -> SecretBox | None:
    """The key of stored secrets, or None; with ``store``, a ``CliError`` when none is set."""
    box = SecretBox.of(settings.secrets_keys())
    if box is None and store:
        raise CliError(
            "--store-secret needs COUNTERSIGN_SECRETS_KEY set where Countersign runs to encrypt "
            f"with ({SECRETS_KEY_HELP}, and keep it: without it the server cannot be "
            "connected); nothing was stored."
        )
    return box


def sealed(config: SourceConfig, written: Sequence[Written], box: SecretBox) -> SourceConfig:
    """``config`` with each of ``written`` encrypted with ``box``."""
    headers, env = dict(config.headers), dict(config.env)
    for secret in written:
        values = headers if secret.kind == "header" else env
        plain = values[secret.name]
        assert isinstance(plain, str)  # written_secrets never names a sealed value
        values[secret.name] = box.seal(plain)
    return config.model_copy(update={"headers": headers, "env": env})


def kept_import(
    server: Imported, config: SourceConfig | str, box: SecretBox | None
) -> tuple[SourceConfig | None, list[str]]:
    """An imported server as it is stored (its written-out secrets sealed with ``box``) and
    what to say of it; None and why when it is skipped."""
    if isinstance(config, str):
        return None, [f"Warning: skipped {server.given!r}: {config}"]
    written = written_secrets(config)
    if not written:
        return config, []
    if box is None:
        head = f"Warning: skipped {server.given!r}; nothing of it was stored:"
        add = f"countersign mcp add … {config.name}"
        return None, [head, *refused_lines(config.name, written, command=add)]
    return sealed(config, written, box), stored_lines(config.name, written)
