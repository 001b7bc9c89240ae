"""The sandbox answers only its own page and the bot: forged cross-site posts and rebound host names are refused."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.sandbox import FIESTA_OPS, Acting, Delivery, WebApi, demo_workspace
from bot.sandbox.page import add_page_routes
from bot.sandbox.payloads import new_id

Page = tuple[WebApi, TestServer]


async def _post(
    server: TestServer, path: str, *, body: str, headers: dict[str, str]
) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(server.make_url(path), data=body.encode(), headers=headers) as answer,
    ):
        return answer.status, await answer.json(content_type=None)


def _said(api: WebApi) -> list[str]:
    return [m.text for m in api.messages]


async def test_a_cross_site_text_plain_post_cannot_answer_a_slash_command(page: Page) -> None:
    """A form or fetch on another site posting text/plain (no CORS preflight) to a response URL is refused."""
    api, server = page
    path = api.response_url(to=("UARJUN", FIESTA_OPS)).removeprefix(api.url)
    forged = '{"text": "Approve everything, says the bot"}'
    status, answer = await _post(server, path, body=forged, headers={"Content-Type": "text/plain"})
    assert (status, answer["ok"]) == (415, False) and "JSON" in answer["error"]
    cross = {"Content-Type": "text/plain", "Origin": "https://evil.example"}
    status, answer = await _post(server, path, body=forged, headers=cross)
    assert status in (403, 415) and answer["ok"] is False
    assert api.messages == [] and api.responses == []


async def test_a_page_endpoint_refuses_a_foreign_origin(page: Page) -> None:
    """JSON posted from another origin (or an opaque one) to /ui/say is refused with 403 and posts nothing."""
    api, server = page
    json_type = {"Content-Type": "application/json"}
    body = '{"as": "UARJUN", "channel": "C0FIESTAOPS", "text": "forged"}'
    for origin in ("https://evil.example", "null", f"http://localhost:{server.port}"):
        status, answer = await _post(
            server, "/ui/say", body=body, headers={**json_type, "Origin": origin}
        )
        assert (status, answer["ok"]) == (403, False), origin
        assert "origin" in answer["error"].lower()
    assert _said(api) == []
    own = {**json_type, "Origin": f"http://127.0.0.1:{server.port}"}
    status, _ = await _post(server, "/ui/say", body=body, headers=own)
    assert status == 200 and _said(api) == ["forged"]


async def test_a_rebound_host_name_reads_nothing(page: Page) -> None:
    """DNS rebinding: a request naming another host (or another port) gets 403, not the page or anyone's messages."""
    _, server = page
    port = server.port
    async with aiohttp.ClientSession() as session:
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}"):
            for path in ("/", "/ui/state?as=UARJUN", "/api/auth.test"):
                async with session.get(server.make_url(path), headers={"Host": host}) as answer:
                    assert answer.status == 403, (host, path)
                    refusal = await answer.json()
                    assert refusal["ok"] is False and "host" in refusal["error"].lower()
        for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            async with session.get(server.make_url("/"), headers={"Host": host}) as answer:
                assert answer.status == 200, host


async def test_response_url_names_cannot_be_guessed(page: Page) -> None:
    """A slash command's response URL carries a long random name; names built like the old ones reach nobody."""
    api, server = page
    url = api.response_url(to=("UMEERA", FIESTA_OPS))
    name = url.rsplit("/", 1)[1]
    assert len(name) >= 32 and name not in api.response_url(to=("UMEERA", FIESTA_OPS))
    json_type = {"Content-Type": "application/json"}
    for guess in ("cmd", new_id("cmd"), name[:-1]):
        status, answer = await _post(
            server, f"/response/{guess}", body='{"text": "forged"}', headers=json_type
        )
        assert (status, answer["ok"]) == (404, False), guess
    assert api.messages == []


async def test_the_bot_still_answers_through_a_response_url_server_to_server(page: Page) -> None:
    """slack_sdk's webhook client (the bot's respond(): JSON, no Origin) reaches the person privately."""
    api, _ = page
    async with aiohttp.ClientSession() as session:
        hook = AsyncWebhookClient(api.response_url(to=("UMEERA", FIESTA_OPS)), session=session)
        answer = await hook.send(text="Only for Meera")
    assert answer.status_code == 200
    [message] = api.messages
    assert (message.text, message.ephemeral_to) == ("Only for Meera", "UMEERA")


async def test_shared_on_every_interface_it_takes_addresses_but_not_names() -> None:
    """With COUNTERSIGN_HOST=0.0.0.0 a LAN address or the configured name is served; another name is not."""
    for configured, served, refused in (
        ("0.0.0.0", ["192.168.1.20", "[fe80::1]", "localhost"], ["evil.example"]),
        ("Shop-Laptop.local", ["shop-laptop.local", "127.0.0.1"], ["evil.example", "10.0.0.2"]),
    ):
        api = WebApi(demo_workspace())
        app = web.Application()
        api.routes(app)
        acting = Acting(api, Delivery("http://127.0.0.1:9/none", "secret", retry_delays=()))
        add_page_routes(app, acting, host=configured)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        try:
            async with aiohttp.ClientSession() as session:
                for name, expected in [(n, 200) for n in served] + [(n, 403) for n in refused]:
                    host = {"Host": f"{name}:{server.port}"}
                    async with session.get(server.make_url("/"), headers=host) as answer:
                        assert answer.status == expected, (configured, name)
        finally:
            await acting.delivery.close()
            await server.close()
