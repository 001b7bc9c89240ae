"""Reads the configuration from the environment, once; the only module that looks at os.environ.

A ``Settings`` is built at start-up and passed down. Missing or contradictory settings fail
there, with a message naming the variable and what to set, rather than on the first button.
"""

from __future__ import annotations

import secrets
from enum import StrEnum
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

from cryptography.fernet import Fernet
from pydantic import Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tools.db import DEFAULT_URL

__all__ = ["SECRETS_KEY_HELP", "Settings", "SettingsError", "SlackMode", "load_settings"]

# How a person makes a COUNTERSIGN_SECRETS_KEY, wherever one is asked for.
SECRETS_KEY_HELP = "make one with `openssl rand -base64 32 | tr '+/' '-_'`"


class SlackMode(StrEnum):
    """How the bot meets Slack: a local sandbox, one workspace over HTTP or Socket Mode, or OAuth."""

    SANDBOX = "sandbox"
    HTTP = "http"
    SOCKET = "socket"
    OAUTH = "oauth"


class SettingsError(Exception):
    """The configuration cannot work; the message says which variable to set and how."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_client_id: str | None = None
    slack_client_secret: SecretStr | None = None
    # Overrides the Slack Web API base URL (the sandbox and the tests point it at loopback).
    slack_api_url: str | None = None

    # Microsoft Teams (the Azure Bot's app registration). The Teams surface is on when the app
    # id is set; the SDK's own CONNECTIONS__SERVICE_CONNECTION__SETTINGS__* names are not read.
    microsoft_app_id: str | None = None
    microsoft_app_password: SecretStr | None = None
    microsoft_app_tenant_id: str | None = None

    database_url: str = DEFAULT_URL
    # Comma-separated: the first signs new cards, the rest are still accepted (key rotation).
    countersign_secret: SecretStr | None = None
    countersign_card_ttl: int = Field(default=1800, ge=60, le=7 * 24 * 3600)
    # Comma-separated Fernet keys: the first encrypts a secret an owner stored for an MCP
    # server (`countersign mcp add … --store-secret`), every one decrypts (key rotation).
    countersign_secrets_key: SecretStr | None = None
    # Seconds a merchant's MCP server's tool list is used before it is listed again (a server
    # that sends notifications/tools/list_changed is listed again at once).
    countersign_mcp_list_ttl: float = Field(default=60.0, ge=0, le=3600)
    # Seconds a card may stay mid-write before a running process settles it as interrupted.
    countersign_reconcile_after: int = Field(default=60, ge=5, le=3600)
    # Seconds a card routed to managers may wait before the owners are told as well; a
    # merchant's policy can set its own.
    countersign_escalate_after: int = Field(default=900, ge=60, le=7 * 24 * 3600)
    countersign_model: str = "offline"
    countersign_model_base_url: str | None = None
    countersign_audit_channel: str | None = None
    # Model turns running at once (each holds its slot for as long as the model takes); the
    # turns of one conversation always run one at a time. Presses have their own slots.
    countersign_turn_limit: int = Field(default=16, ge=1, le=1000)
    countersign_press_limit: int = Field(default=8, ge=1, le=1000)
    # Seconds a message may wait for its answer before it is shown as being worked on (Slack:
    # an hourglass reaction); an answer within them is simply posted.
    countersign_typing_after: float = Field(default=1.0, ge=0, le=60)
    # Who may read GET /metrics besides this machine: anyone sending "Bearer <token>".
    countersign_metrics_token: SecretStr | None = None
    # Worker processes serving the port (``bot.runtime.workers``); one per core uses the machine.
    countersign_workers: int = Field(default=1, ge=1, le=64)
    countersign_host: str = "127.0.0.1"
    # The address people and agents reach this server at (https://countersign.example.com):
    # /mcp answers requests naming its host, and browser pages of its origin, besides loopback.
    countersign_public_url: str | None = None
    # Lets an OAuth client's metadata document be fetched from loopback over http (tests only):
    # otherwise only https documents at public addresses are fetched (bot.mcp.oauth_clients).
    countersign_oauth_loopback_clients: bool = False
    port: int = Field(default=3000, ge=1, le=65535)
    openai_api_key: SecretStr | None = None
    anthropic_api_key: SecretStr | None = None
    log_level: str = "INFO"

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        problems = _contradictions(self)
        if problems:
            raise ValueError(" ".join(problems))
        return self

    @property
    def slack_mode(self) -> SlackMode:
        if self.slack_client_id:
            return SlackMode.OAUTH
        if self.slack_app_token:
            return SlackMode.SOCKET
        if self.slack_bot_token:
            return SlackMode.HTTP
        return SlackMode.SANDBOX

    @property
    def slack_enabled(self) -> bool:
        """True when Slack credentials are set (the sandbox's Slack sets them too)."""
        return self.slack_mode is not SlackMode.SANDBOX

    def nothing_to_serve(self) -> str:
        """Why ``serve`` cannot start when no surface is configured, naming what to set."""
        return (
            "Nothing to serve: set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (Slack), or "
            "MICROSOFT_APP_ID and MICROSOFT_APP_PASSWORD (Teams), or both; "
            "`countersign run` with neither starts the local sandbox."
        )

    @property
    def teams_enabled(self) -> bool:
        """True when the Teams surface (``POST /api/messages``) is configured."""
        return bool(self.microsoft_app_id)

    def card_secrets(self) -> list[str]:
        """The card signing keys, newest first.

        Production (any Slack or Teams credentials) must set COUNTERSIGN_SECRET. The sandbox, which runs
        on one machine with nothing configured, keeps a generated key in a file beside the
        database so cards survive a restart.
        """
        if self.countersign_secret is not None:
            return [part.strip() for part in self.countersign_secret.get_secret_value().split(",")]
        return [_local_secret(Path(".countersign-secret"))]

    def secrets_keys(self) -> list[str]:
        """The keys of stored MCP secrets, newest first; empty when none is set."""
        if self.countersign_secrets_key is None:
            return []
        return [k.strip() for k in self.countersign_secrets_key.get_secret_value().split(",")]


def _contradictions(s: Settings) -> list[str]:
    problems: list[str] = []
    if s.countersign_secret is not None:
        parts = [p.strip() for p in s.countersign_secret.get_secret_value().split(",")]
        if not all(len(p) >= 16 for p in parts):
            problems.append(
                "COUNTERSIGN_SECRET: every comma-separated key must be at least 16 characters."
            )
    if s.countersign_secrets_key is not None and not all(map(_fernet_key, s.secrets_keys())):
        problems.append(
            "COUNTERSIGN_SECRETS_KEY: every comma-separated key must be a Fernet key (44 "
            "characters of URL-safe base64); " + SECRETS_KEY_HELP + "."
        )
    live = any((s.slack_bot_token, s.slack_app_token, s.slack_client_id))
    if live and s.countersign_secret is None:
        problems.append(
            "COUNTERSIGN_SECRET must be set when Slack credentials are (e.g. `openssl rand -hex 32`)."
        )
    problems += _teams_contradictions(s)
    if live and s.slack_signing_secret is None and not s.slack_app_token:
        problems.append("SLACK_SIGNING_SECRET must be set (Basic Information → Signing Secret).")
    if s.slack_app_token and not s.slack_bot_token and not s.slack_client_id:
        problems.append("SLACK_APP_TOKEN (Socket Mode) also needs SLACK_BOT_TOKEN.")
    if bool(s.slack_client_id) != bool(s.slack_client_secret):
        problems.append(
            "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET must be set together (OAuth installs)."
        )
    if s.slack_app_token and not s.slack_app_token.get_secret_value().startswith("xapp-"):
        problems.append("SLACK_APP_TOKEN must be an app-level token starting with xapp-.")
    if s.countersign_model_base_url and not s.countersign_model_base_url.startswith(
        ("http://", "https://")
    ):
        problems.append("COUNTERSIGN_MODEL_BASE_URL must be an http(s) URL.")
    if s.countersign_public_url is not None and not _is_origin_url(s.countersign_public_url):
        problems.append(
            "COUNTERSIGN_PUBLIC_URL must be the http(s) address this server is reached at, "
            "e.g. https://countersign.example.com (no user, query or fragment)."
        )
    return problems


def _is_origin_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises for a port that is no number)
    except ValueError:
        return False
    plain = not (parts.username or parts.password or parts.query or parts.fragment)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and plain


def _teams_contradictions(s: Settings) -> list[str]:
    problems: list[str] = []
    if bool(s.microsoft_app_id) != bool(s.microsoft_app_password):
        problems.append(
            "MICROSOFT_APP_ID and MICROSOFT_APP_PASSWORD must be set together (the Azure Bot's "
            "app registration: its client id and a client secret)."
        )
    if s.microsoft_app_tenant_id and not s.microsoft_app_id:
        problems.append("MICROSOFT_APP_TENANT_ID is set but MICROSOFT_APP_ID is not.")
    if s.microsoft_app_id and s.countersign_secret is None:
        problems.append(
            "COUNTERSIGN_SECRET must be set when Teams credentials are (e.g. `openssl rand -hex 32`)."
        )
    return problems


def _fernet_key(key: str) -> bool:
    try:
        Fernet(key.encode())
    except ValueError:  # wrong length or not URL-safe base64 (binascii.Error is one)
        return False
    return True


def _local_secret(path: Path) -> str:
    if path.exists():
        return path.read_text().strip()
    value = secrets.token_hex(32)
    path.write_text(value + "\n")
    path.chmod(0o600)
    return value


def load_settings(**overrides: object) -> Settings:
    """Builds the settings or raises ``SettingsError`` with every problem spelled out."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as invalid:
        raise SettingsError("Configuration problem: " + " ".join(_describe(invalid))) from invalid


def _describe(invalid: ValidationError) -> list[str]:
    """One readable line per problem, named by its environment variable."""
    lines = []
    for error in invalid.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        field = ".".join(map(str, error["loc"]))
        lines.append(f"{field.upper()}: {message}" if field else message)
    return lines
