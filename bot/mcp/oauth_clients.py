"""Fetches a client ID metadata document: an agent whose ``client_id`` is the URL of its own JSON; never reaches a private address.

The MCP authorization spec prefers these to registration: ``client_id`` is an https URL, and
the JSON there says the client's name and exact redirect URIs. Fetching a URL a stranger
names is a server-side request forgery risk (a metadata document "at"
http://169.254.169.254/ or http://10.0.0.5/admin), so the fetch:

- takes https only, and ``http://`` on loopback only where a setting allows it (the tests);
- connects only to addresses that are globally routable (loopback too under that setting),
  checked on the very addresses it connects to, so a name that resolves elsewhere on a
  second look (DNS rebinding) gains nothing;
- gives up after ``_TIMEOUT`` seconds and ``_MAX_BYTES`` bytes, and follows no redirect;
- keeps a document for ``_KEEP`` seconds, so a client's burst of requests fetches it once.

A document is refused unless its ``client_id`` is its own URL exactly, it lists redirect URIs,
and it asks for no client secret (Countersign's clients are public).
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import structlog
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

__all__ = ["MetadataDocuments", "is_metadata_url"]

log = structlog.get_logger("bot.mcp.oauth_clients")

_TIMEOUT = 5.0
_MAX_BYTES = 64 * 1024
_KEEP = 300.0


def is_metadata_url(client_id: str) -> bool:
    return client_id.startswith(("https://", "http://"))


def _allowed(address: str, *, loopback: bool) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return ip.is_global or (loopback and ip.is_loopback)


class _Checked(AbstractResolver):
    """Resolves as usual, then keeps only the addresses a fetch may connect to."""

    def __init__(self, *, loopback: bool) -> None:
        self._inner = ThreadedResolver()
        self._loopback = loopback

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        kept = [r for r in found if _allowed(r["host"], loopback=self._loopback)]
        if not kept:
            raise OSError(f"{host} resolves to no public address")
        return kept

    async def close(self) -> None:
        await self._inner.close()


class MetadataDocuments:
    """Fetches, checks and keeps clients' metadata documents."""

    def __init__(self, *, allow_loopback: bool = False) -> None:
        self.allow_loopback = allow_loopback
        self._kept: dict[str, tuple[float, OAuthClientInformationFull]] = {}

    async def client(self, url: str) -> OAuthClientInformationFull | None:
        """The client the document at ``url`` describes, or None (logged why)."""
        kept = self._kept.get(url)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        why = self._refused_url(url)
        document = None if why else await self._fetch(url)
        client = _checked(url, document) if document is not None else None
        if client is None:
            log.info("client_metadata_refused", url=url[:200], why=why or "document")
            return None
        self._kept[url] = (time.monotonic() + _KEEP, client)
        return client

    def _refused_url(self, url: str) -> str | None:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.scheme == "http" and not self.allow_loopback:
            return "http"
        if parts.scheme not in ("https", "http") or not host or parts.path in ("", "/"):
            return "shape"
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            return None if parts.scheme == "https" or host == "localhost" else "http"
        # aiohttp connects to an address given as such without resolving it.
        return None if _allowed(str(literal), loopback=self.allow_loopback) else "private"

    async def _fetch(self, url: str) -> Any:
        connector = aiohttp.TCPConnector(resolver=_Checked(loopback=self.allow_loopback))
        timeout = aiohttp.ClientTimeout(total=_TIMEOUT)
        try:
            async with (
                aiohttp.ClientSession(connector=connector, timeout=timeout) as http,
                http.get(url, allow_redirects=False, headers={"Accept": "application/json"}) as r,
            ):
                if r.status != 200:
                    return None
                body = await r.content.read(_MAX_BYTES + 1)
        except (aiohttp.ClientError, OSError, TimeoutError) as failed:
            log.info("client_metadata_unreachable", url=url[:200], error=type(failed).__name__)
            return None
        if len(body) > _MAX_BYTES:
            return None
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return None


def _checked(url: str, document: Any) -> OAuthClientInformationFull | None:
    if not isinstance(document, dict) or document.get("client_id") != url:
        return None
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none" or "client_secret" in document or not document.get("redirect_uris"):
        return None
    try:
        return OAuthClientInformationFull.model_validate(
            {**document, "token_endpoint_auth_method": "none"}
        )
    except ValidationError:
        return None
