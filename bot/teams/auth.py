"""Checks the Bot Framework token on every Teams request; never trusts a claim it did not verify.

A request to ``/api/messages`` carries a JWT from Microsoft. It is accepted only when every one
of these holds (Microsoft's "Authentication with the Bot Connector API"):

- it is signed (RS256) by a key the issuer publishes, and is within its validity period;
- its issuer is the Bot Framework, or the configured tenant's Microsoft Entra issuers;
- its audience is this bot's app id;
- its ``serviceurl`` claim equals the activity's ``serviceUrl``;
- an Entra token was issued to this bot's own app (its ``appid``/``azp`` is the app id).

The SDK's own check accepted any issuer and logged a ``serviceurl`` mismatch as a warning; the
activity's ``serviceUrl`` was then used for the member lookup and for posting cards, each call
carrying the bot's bearer token, so a forged activity could send both to any host. After this
check, the service URL the bot calls is one a Microsoft-signed token vouched for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import aiohttp
import jwt
import structlog

__all__ = [
    "BOT_FRAMEWORK_ISSUER",
    "BOT_FRAMEWORK_KEYS",
    "FAILED_FETCH_SECONDS",
    "JwksKeys",
    "KeySource",
    "TokenChecker",
    "TokenPolicy",
    "TokenRefusedError",
    "same_service_url",
]

log = structlog.get_logger("bot.teams.auth")

BOT_FRAMEWORK_ISSUER = "https://api.botframework.com"
BOT_FRAMEWORK_KEYS = "https://login.botframework.com/v1/.well-known/keys"
_ENTRA_KEYS = "https://login.microsoftonline.com/{tenant}/discovery/v2.0/keys"
_LEEWAY_SECONDS = 300  # the clock skew Microsoft documents for these tokens
_REFETCH_SECONDS = 300  # an unknown key id refetches the key set at most this often
_KEYS_MAX_AGE = 24 * 3600
# After a failed fetch, the key set is not asked for again this soon.
FAILED_FETCH_SECONDS = 30.0


class TokenRefusedError(Exception):
    """The request's token does not prove it came from Microsoft for this bot."""


@dataclass(frozen=True, slots=True)
class TokenPolicy:
    """Who may call this bot: its app id and, for a single-tenant bot, its Entra tenant."""

    app_id: str
    tenant_id: str | None = None
    bot_framework_keys: str = BOT_FRAMEWORK_KEYS
    entra_keys: str = _ENTRA_KEYS

    def keys_url(self, issuer: str) -> str | None:
        """Where the issuer's signing keys are published, or None for an issuer not accepted."""
        if issuer == BOT_FRAMEWORK_ISSUER:
            return self.bot_framework_keys
        if self.tenant_id and issuer in self.entra_issuers:
            return self.entra_keys.format(tenant=self.tenant_id)
        return None

    @property
    def entra_issuers(self) -> frozenset[str]:
        if not self.tenant_id:
            return frozenset()
        tenant = self.tenant_id
        return frozenset(
            {
                f"https://sts.windows.net/{tenant}/",
                f"https://login.microsoftonline.com/{tenant}/v2.0",
            }
        )


class KeySource(Protocol):
    async def key(self, url: str, kid: str) -> Any: ...


@dataclass
class JwksKeys:
    """Signing keys fetched from the issuers' published key sets, cached per URL; a failed
    fetch is remembered for ``FAILED_FETCH_SECONDS``.

    A failure was not cached: while the key set could not be fetched, every request with a
    bogus token (anyone can send one) made the server fetch it again, so a flood of them
    became a flood of outbound requests. ``clock`` is ``time.monotonic`` but in tests.
    """

    session: aiohttp.ClientSession | None = None
    clock: Callable[[], float] = time.monotonic
    _sets: dict[str, tuple[float, jwt.PyJWKSet]] = field(default_factory=dict)
    _failed: dict[str, float] = field(default_factory=dict)

    async def key(self, url: str, kid: str) -> Any:
        fetched_at, keys = self._sets.get(url, (0.0, None))
        age = self.clock() - fetched_at
        stale = keys is None or age > _KEYS_MAX_AGE
        if stale or (_find(keys, kid) is None and age > _REFETCH_SECONDS):
            keys = await self._fetch(url)
        found = _find(keys, kid)
        if found is None:
            raise TokenRefusedError("the token is signed with a key the issuer does not publish")
        return found

    async def _fetch(self, url: str) -> jwt.PyJWKSet:
        if self.session is None:
            raise TokenRefusedError("the server is still starting")
        failed_at = self._failed.get(url)
        if failed_at is not None and self.clock() - failed_at < FAILED_FETCH_SECONDS:
            raise TokenRefusedError("the issuer's signing keys could not be fetched")
        try:
            async with self.session.get(url, timeout=aiohttp.ClientTimeout(total=10)) as response:
                response.raise_for_status()
                keys = jwt.PyJWKSet.from_dict(await response.json(content_type=None))
        except (aiohttp.ClientError, TimeoutError, ValueError, jwt.PyJWKSetError) as failed:
            self._failed[url] = self.clock()
            log.warning("signing_keys_unavailable", url=url, error=type(failed).__name__)
            raise TokenRefusedError("the issuer's signing keys could not be fetched") from None
        self._failed.pop(url, None)
        self._sets[url] = (self.clock(), keys)
        return keys


def _find(keys: jwt.PyJWKSet | None, kid: str) -> Any:
    if keys is None:
        return None
    for candidate in keys.keys:
        if candidate.key_id == kid:
            return candidate.key
    return None


def same_service_url(one: str, other: str) -> bool:
    """Service URLs compare without case in the scheme and host and without a trailing slash."""
    return _normal(one) == _normal(other)


def _normal(url: str) -> str:
    scheme, _, rest = url.strip().partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}".rstrip("/")


class TokenChecker:
    """Verifies a request's token against the policy and the activity it came with."""

    def __init__(self, policy: TokenPolicy, keys: KeySource) -> None:
        self._policy = policy
        self._keys = keys

    async def check(self, authorization: str | None, activity: Mapping[str, Any]) -> dict[str, Any]:
        """The verified claims; raises ``TokenRefusedError`` saying which check failed."""
        token = _bearer(authorization)
        issuer, kid = _unverified(token)
        url = self._policy.keys_url(issuer)
        if url is None:
            raise TokenRefusedError("the token's issuer is not accepted")
        claims = self._verified(token, await self._keys.key(url, kid), issuer)
        self._check_caller(claims, issuer)
        _check_service_url(claims, activity)
        return claims

    def _verified(self, token: str, key: Any, issuer: str) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key,
                algorithms=["RS256"],
                audience=self._policy.app_id,
                issuer=issuer,
                leeway=_LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.InvalidAudienceError:
            raise TokenRefusedError("the token is for another app") from None
        except jwt.ExpiredSignatureError:
            raise TokenRefusedError("the token has expired") from None
        except jwt.PyJWTError as failed:
            raise TokenRefusedError(f"the token is not valid ({type(failed).__name__})") from None
        return claims

    def _check_caller(self, claims: Mapping[str, Any], issuer: str) -> None:
        if issuer == BOT_FRAMEWORK_ISSUER:
            return
        # An Entra token must have been issued to this bot's own app registration; a token that
        # another app of the same tenant obtained for this audience is not the Bot Service.
        caller = claims.get("azp") if str(claims.get("ver")) == "2.0" else claims.get("appid")
        if caller != self._policy.app_id:
            raise TokenRefusedError("the token was issued to another app")


def _bearer(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise TokenRefusedError("the request has no bearer token")
    return token.strip()


def _unverified(token: str) -> tuple[str, str]:
    """The issuer and key id, read before the signature is checked: used only to pick the key."""
    try:
        header = jwt.get_unverified_header(token)
        payload = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise TokenRefusedError("the token cannot be read") from None
    if header.get("alg") != "RS256" or not header.get("kid"):
        raise TokenRefusedError("the token is not signed the way Microsoft signs")
    issuer = payload.get("iss")
    return (issuer if isinstance(issuer, str) else ""), str(header["kid"])


def _check_service_url(claims: Mapping[str, Any], activity: Mapping[str, Any]) -> None:
    vouched = claims.get("serviceurl")
    claimed = activity.get("serviceUrl")
    if not isinstance(vouched, str) or not isinstance(claimed, str):
        raise TokenRefusedError("the token does not vouch for the activity's service URL")
    if not same_service_url(vouched, claimed):
        raise TokenRefusedError("the activity's service URL is not the one the token vouches for")
