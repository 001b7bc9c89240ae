"""Countersign as its own OAuth 2.1 authorization server for ``/mcp``: the SDK's provider; never sees a password.

The MCP SDK's handlers (``mcp.server.auth``) parse and check every request: PKCE S256, the
redirect URI registered exactly, the code's client. This provider answers them from
``tools.Consents`` and ``tools.Grants``:

- a client is its metadata document's URL (``bot.mcp.oauth_clients``), or registers itself
  (RFC 7591); either way a public client, with no secret: PKCE protects the code, and only a
  hash of any token is kept;
- ``authorize`` opens a consent and sends the browser to the authorization page; it refuses a
  request without ``resource`` (RFC 8707), or naming anything but this server's ``/mcp``;
- a code is exchanged once; a refresh token is used once and replaced, and either presented
  again revokes the whole grant.
"""

from __future__ import annotations

import time
from urllib.parse import urlencode

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    RefreshToken,
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from bot.mcp.oauth_clients import MetadataDocuments, is_metadata_url
from tools import Consent, Consents, Grants

__all__ = ["CONSENT_PATH", "PUBLIC_CLIENT", "Provider", "same_resource"]

CONSENT_PATH = "/oauth/consent"
# The token endpoint method of a public client (RFC 7591): no secret at all.
PUBLIC_CLIENT = "none"
# The SDK checks a code's expiry against the system clock; ``Grants.code`` has already refused
# an expired one by Countersign's own clock, so what the SDK is told is only "not yet".
_CHECKED = 60


def same_resource(given: str | None, resource: str) -> bool:
    """RFC 8707: the resource named is this server's ``/mcp`` (a trailing slash aside)."""
    return given is not None and given.rstrip("/") == resource.rstrip("/")


class _Code(AuthorizationCode):
    consent: Consent


class Provider:
    """The SDK's ``OAuthAuthorizationServerProvider`` for one public base URL."""

    def __init__(
        self, consents: Consents, grants: Grants, documents: MetadataDocuments, *, base: str
    ) -> None:
        self.consents, self.grants, self.documents, self.base = consents, grants, documents, base
        self.resource = f"{base}/mcp"

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if is_metadata_url(client_id):
            return await self.documents.client(client_id)
        found = await self.grants.client(client_id)
        return OAuthClientInformationFull.model_validate(found) if found else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if client_info.token_endpoint_auth_method != PUBLIC_CLIENT:
            raise RegistrationError(
                "invalid_client_metadata",
                'Countersign registers public clients only: send token_endpoint_auth_method "none" '
                "(PKCE protects the code; no client secret is issued or kept).",
            )
        info = client_info.model_dump(mode="json", exclude_none=True)
        await self.grants.register(client_info.client_id, info)

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        if not same_resource(params.resource, self.resource):
            raise AuthorizeError(
                "invalid_target",
                f"Send resource={self.resource} (RFC 8707): tokens here are for that resource only.",
            )
        handle = await self.consents.open(
            client_id=client.client_id,
            client_name=client.client_name or client.client_id,
            redirect_uri=str(params.redirect_uri),
            state=params.state,
            code_challenge=params.code_challenge,
            resource=self.resource,
            scopes=params.scopes or [],
        )
        return f"{self.base}{CONSENT_PATH}?{urlencode({'request': handle})}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> _Code | None:
        consent = await self.grants.code(authorization_code)
        if consent is None or consent.client_id != client.client_id:
            return None
        return _Code(
            code=authorization_code,
            scopes=list(consent.scopes),
            expires_at=time.time() + _CHECKED,
            client_id=consent.client_id,
            code_challenge=consent.code_challenge,
            redirect_uri=AnyUrl(consent.redirect_uri),
            redirect_uri_provided_explicitly=True,
            resource=consent.resource,
            subject=str(consent.personid),
            consent=consent,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: _Code
    ) -> OAuthToken:
        consent = authorization_code.consent
        issued = await self.grants.exchange(consent, client_name=consent.client_name)
        if issued is None:
            raise TokenError(
                "invalid_grant",
                "This code was already used; the connection it made is revoked. Connect again.",
            )
        return _token(issued.access_token, issued.refresh_token, issued.expires_in)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        grant = await self.grants.refreshable(refresh_token)
        if grant is None or grant.client_id != client.client_id:
            return None
        return RefreshToken(
            token=refresh_token, client_id=grant.client_id, scopes=[], resource=grant.resource
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        issued = await self.grants.rotate(refresh_token.token)
        if issued is None:
            raise TokenError(
                "invalid_grant",
                "This refresh token was already used, so the connection is revoked (a copy of "
                "it may have leaked). Connect the agent again.",
            )
        return _token(issued.access_token, issued.refresh_token, issued.expires_in)

    async def load_access_token(self, token: str) -> AccessToken | None:
        bearer = await self.grants.verify(token, resource=self.resource)
        grant = await self.grants.grant_of(token) if bearer is not None else None
        if bearer is None or grant is None:
            return None
        expires = int(bearer.expires_at.timestamp()) if bearer.expires_at else None
        return AccessToken(
            token=token, client_id=grant.client_id, scopes=[], expires_at=expires,
            resource=grant.resource, subject=str(grant.personid),
        )  # fmt: skip

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        grant = await self.grants.grant_of(token.token)
        if grant is not None:
            await self.grants.revoke(grant.id)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "Connect through the authorization page.")

    def redirect(self, consent: Consent, code: str | None) -> str:
        """Where the browser goes once the person answered: the code, or access_denied."""
        if code is None:
            return construct_redirect_uri(
                consent.redirect_uri, error="access_denied", state=consent.state, iss=self.base
            )
        return construct_redirect_uri(
            consent.redirect_uri, code=code, state=consent.state, iss=self.base
        )


def _token(access: str, refresh: str, expires_in: int) -> OAuthToken:
    return OAuthToken(access_token=access, expires_in=expires_in, refresh_token=refresh)
