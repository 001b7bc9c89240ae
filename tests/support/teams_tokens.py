"""Bot Framework tokens signed by a local RSA key that stands in for Microsoft's; never a real one."""

from __future__ import annotations

import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.teams.auth import BOT_FRAMEWORK_ISSUER, TokenChecker, TokenPolicy, TokenRefusedError

__all__ = ["APP_ID", "KID", "MICROSOFT", "StaticKeys", "checker", "token"]

APP_ID = "00000000-0000-0000-0000-0000000000b0"
KID = "local-key-1"
MICROSOFT = rsa.generate_private_key(public_exponent=65537, key_size=2048)


class StaticKeys:
    """The keys Microsoft would publish, by URL: here one local public key for every issuer."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def key(self, url: str, kid: str) -> Any:
        self.asked.append(url)
        if kid != KID:
            raise TokenRefusedError("unknown key")
        return MICROSOFT.public_key()


def token(*, key: Any = MICROSOFT, kid: str = KID, alg: str = "RS256", **claims: Any) -> str:
    """A Bot Connector token for ``APP_ID``; a claim given as None is left out."""
    now = int(time.time())
    body = {
        "iss": BOT_FRAMEWORK_ISSUER,
        "aud": APP_ID,
        "nbf": now - 10,
        "exp": now + 3600,
        **claims,
    }
    return jwt.encode(
        {k: v for k, v in body.items() if v is not None}, key, algorithm=alg, headers={"kid": kid}
    )


def checker(*, tenant: str | None = None) -> TokenChecker:
    """The bot's token check, trusting only the local key."""
    return TokenChecker(TokenPolicy(APP_ID, tenant), StaticKeys())
