"""The OAuth endpoints and the authorization page of ``/mcp`` on the aiohttp app; never runs a tool.

Discovery (RFC 9728 protected resource metadata, RFC 8414 authorization server metadata) is
answered here. ``/authorize``, ``/token``, ``/register`` and ``/revoke`` are the MCP SDK's own
handlers (Starlette), reached through ``bot.mcp.exchange`` with ``bot.mcp.oauth.Provider``
behind them. The authorization page asks for a work email and sends that person a consent
card (``bot.cards.consent``) through the surfaces mounted here. Every route is checked for
Host and Origin as ``/mcp`` is (``bot.mcp.guard``).

The public base URL is ``COUNTERSIGN_PUBLIC_URL``; without it, the loopback address the
request came to (the guard answers no other host), which is what ``make run`` serves.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from urllib.parse import urlsplit

import structlog
from aiohttp import web
from mcp.server.auth.routes import build_metadata, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthMetadata, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.routing import Router

from bot.adapter import Adapter, Reach
from bot.cards.consent import ConsentCard, ConsentPoster
from bot.mcp import oauth_page
from bot.mcp.exchange import exchange
from bot.mcp.guard import Guard
from bot.mcp.oauth import CONSENT_PATH, PUBLIC_CLIENT, Provider, same_resource
from bot.mcp.oauth_clients import MetadataDocuments
from bot.services import Services
from tools import CONSENT_TTL, Consent, Consents, ConsentSigner, Grants

__all__ = ["BROWSER_COOKIE", "PRM_PATH", "OAuthRoutes"]

log = structlog.get_logger("bot.mcp.oauth")

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
BROWSER_COOKIE = "cs_consent"
PRM_PATH = "/.well-known/oauth-protected-resource"
_AS_PATH = "/.well-known/oauth-authorization-server"
_SDK_PATHS = ("/authorize", "/token", "/register", "/revoke")


class OAuthRoutes:
    """Discovery, the SDK's OAuth endpoints, and the authorization page."""

    def __init__(
        self,
        services: Services,
        reaches: Sequence[Reach],
        guard: Guard,
        *,
        public_url: str | None,
        secrets: Sequence[str],
        loopback_clients: bool = False,
    ) -> None:
        self.services, self.reaches, self.guard = services, list(reaches), guard
        self.public = public_url.rstrip("/") if public_url else None
        clock = services.registry.now
        self.consents = Consents(services.db, clock=clock)
        self.grants = Grants(services.db, clock=clock)
        self.signer = ConsentSigner(secrets)
        self.documents = MetadataDocuments(allow_loopback=loopback_clients)
        self._routers: dict[str, Router] = {}

    def mount(self, web_app: web.Application) -> None:
        for path in (PRM_PATH, PRM_PATH + "/mcp"):
            web_app.router.add_get(path, self._guarded(self._resource_metadata))
        web_app.router.add_get(_AS_PATH, self._guarded(self._server_metadata))
        for path in _SDK_PATHS:
            web_app.router.add_route("*", path, self._guarded(self._sdk))
        web_app.router.add_get(CONSENT_PATH, self._guarded(self._ask))
        web_app.router.add_post(CONSENT_PATH, self._guarded(self._asked))
        web_app.router.add_get(CONSENT_PATH + "/status", self._guarded(self._status))

    def base(self, request: web.Request) -> str:
        return self.public or f"http://{request.host}"

    def resource_metadata_url(self, request: web.Request) -> str:
        return f"{self.base(request)}{PRM_PATH}/mcp"

    def _guarded(self, handler: _Handler) -> _Handler:
        async def guarded(request: web.Request) -> web.StreamResponse:
            refused = await self.guard.foreign(request)
            return refused if refused is not None else await handler(request)

        return guarded

    def _provider(self, request: web.Request) -> Provider:
        return Provider(self.consents, self.grants, self.documents, base=self.base(request))

    async def _resource_metadata(self, request: web.Request) -> web.Response:
        base = self.base(request)
        # From strings, so the model keeps a path-less issuer without a trailing slash: a
        # client compares it with the issuer exactly (RFC 8414).
        metadata = ProtectedResourceMetadata.model_validate(
            {
                "resource": f"{base}/mcp",
                "authorization_servers": [base],
                "resource_name": "Countersign",
            }
        )
        return web.json_response(metadata.model_dump(mode="json", exclude_none=True))

    async def _server_metadata(self, request: web.Request) -> web.Response:
        metadata = build_metadata(
            AnyHttpUrl(self.base(request)),
            None,
            ClientRegistrationOptions(enabled=True),
            RevocationOptions(enabled=True),
        )
        # Public clients only (``bot.mcp.oauth``), and the issuer named on each redirect (RFC 9207).
        metadata.token_endpoint_auth_methods_supported = ["none"]
        metadata.revocation_endpoint_auth_methods_supported = ["none"]
        metadata.authorization_response_iss_parameter_supported = True
        metadata.client_id_metadata_document_supported = True
        # Validated again from the string, so the path-less issuer keeps no trailing slash: a
        # client compares it with the issuer it was told of exactly (RFC 8414, RFC 9207).
        shown = metadata.model_dump(mode="json", exclude_none=True)
        checked = OAuthMetadata.model_validate({**shown, "issuer": self.base(request)})
        return web.json_response(checked.model_dump(mode="json", exclude_none=True))

    async def _sdk(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if request.path == "/token" and request.method == "POST":
            given = (await request.post()).get("resource")
            resource = f"{self.base(request)}/mcp"
            if isinstance(given, str) and not same_resource(given, resource):
                return _token_error("invalid_target", f"Tokens here are for {resource} only.")
        if request.path == "/register" and request.method == "POST":
            body = _public_client(body)
        if request.path == "/revoke" and request.method == "POST":
            body = _no_secret(body, await request.post())
        base = self.base(request)
        router = self._routers.get(base)
        if router is None:
            routes = create_auth_routes(
                self._provider(request),
                AnyHttpUrl(base),
                client_registration_options=ClientRegistrationOptions(enabled=True),
                revocation_options=RevocationOptions(enabled=True),
            )
            router = self._routers[base] = Router(routes=routes)
        return await exchange(router, request, {}, body=body)

    async def _ask(self, request: web.Request) -> web.Response:
        handle = request.query.get("request", "")
        consent = await self.consents.get(handle)
        if consent is None or consent.expired(self.services.registry.now()):
            return _html(oauth_page.gone_page(), status=400)
        if consent.status == "asked" and consent.short_code:
            return _html(oauth_page.waiting_page(handle, consent.short_code))
        if consent.status != "new":
            return _html(oauth_page.gone_page(), status=400)
        return _html(oauth_page.ask_page(handle, consent.client_name))

    async def _asked(self, request: web.Request) -> web.Response:
        form = await request.post()
        handle, email = str(form.get("request", "")), str(form.get("email", ""))
        browser = secrets.token_urlsafe(32)
        asked = await self.consents.ask(handle, email, self.services.directory, browser=browser)
        if asked is None:
            return await self._ask(request.clone(rel_url=f"{CONSENT_PATH}?request={handle}"))
        consent, person, places = asked
        assert consent.short_code is not None
        if person is not None:
            await self._send_card(consent, person.userid, person.tenantid, places)
        else:
            log.info("consent_email_unknown")
        page = _html(oauth_page.waiting_page(handle, consent.short_code))
        # Only this browser is told the code: someone else who learns the page's address
        # (a log, a shoulder) cannot collect the code the person's Allow makes.
        page.set_cookie(
            BROWSER_COOKIE,
            browser,
            max_age=int(CONSENT_TTL.total_seconds()),
            httponly=True,
            samesite="Strict",
            secure=request.secure or (self.public or "").startswith("https:"),
            path=CONSENT_PATH,
        )
        return page

    async def _send_card(
        self, consent: Consent, personid: int, tenantid: int, places: list[tuple[str, str, str]]
    ) -> None:
        """The consent card in the person's own DM: Slack first, else their Teams 1:1 chat."""
        card = ConsentCard(
            client_name=consent.client_name,
            client_host=_host(consent.redirect_uri),
            merchant=await self.services.directory.merchant_name(tenantid) or "your merchant",
            code=consent.short_code or "",
            allow=self.signer.value(consent.id, personid, "allow"),
            deny=self.signer.value(consent.id, personid, "deny"),
        )
        for platform, installation, user in places:
            for reach in (r for r in self.reaches if r.platform == platform):
                if await _post(reach, installation, user, card):
                    log.info("consent_card_sent", platform=platform, person=personid)
                    return
        log.warning("consent_card_unreached", person=personid)

    async def _status(self, request: web.Request) -> web.Response:
        handle = request.query.get("request", "")
        asked = await self.consents.get(handle)
        if asked is not None and not asked.opened_in(request.cookies.get(BROWSER_COOKIE, "")):
            return web.json_response(
                {
                    "status": "elsewhere",
                    "message": "Finish connecting in the browser where you typed your email.",
                },
                status=403,
            )
        found = await self.consents.outcome(handle)
        if found is None:
            return web.json_response({"status": "unknown"}, status=404)
        consent, code = found
        if consent.status in ("new", "asked"):
            return web.json_response({"status": "waiting"}, headers={"Cache-Control": "no-store"})
        if consent.status == "redeemed" and code is None:
            return web.json_response({"status": "answered"}, headers={"Cache-Control": "no-store"})
        redirect = self._provider(request).redirect(consent, code)
        return web.json_response(
            {"status": consent.status, "redirect": redirect}, headers={"Cache-Control": "no-store"}
        )


async def _post(reach: Reach, installation: str, user: str, card: ConsentCard) -> bool:
    posted: list[bool] = []

    async def work(adapter: Adapter) -> None:
        if isinstance(adapter, ConsentPoster):
            posted.append(await adapter.post_consent(user, card))

    await reach.with_installation(installation, work, user=user)
    return any(posted)


def _host(redirect_uri: str) -> str:
    """The host the code goes to: what a person can check. Not the ``client_uri`` a client
    claims, which any registration may set to claude.ai."""
    return urlsplit(redirect_uri).hostname or "unknown host"


def _public_client(body: bytes) -> bytes:
    """A registration that names no token endpoint method is a public client's (RFC 7591 says
    the default is a secret, which Countersign never issues)."""
    try:
        metadata = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body  # the SDK answers it with invalid_client_metadata
    if isinstance(metadata, dict) and "token_endpoint_auth_method" not in metadata:
        metadata["token_endpoint_auth_method"] = PUBLIC_CLIENT
        return json.dumps(metadata).encode()
    return body


def _no_secret(body: bytes, form: Mapping[str, object]) -> bytes:
    """A public client's revocation, as RFC 7009 has it sent (no ``client_secret``): the SDK's
    handler requires the field, and answered such a request 400 "client_secret: Field
    required", so a client could never revoke its token."""
    if "client_secret" in form:
        return body
    return body + (b"&" if body else b"") + b"client_secret="


def _token_error(error: str, description: str) -> web.Response:
    return web.json_response(
        {"error": error, "error_description": description},
        status=400,
        headers={"Cache-Control": "no-store"},
    )


def _html(text: str, *, status: int = 200) -> web.Response:
    return web.Response(
        text=text,
        status=status,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY"},
    )
