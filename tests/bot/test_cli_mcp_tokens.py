"""`countersign mcp-token create`, `list` and `revoke`, through the real parser and commands."""

from __future__ import annotations

import asyncio
import hashlib
import re
from pathlib import Path

from tests.bot.test_cli import assert_one_line_failure, cli
from tools import Connections, Consents, Directory, Grants, Platform, Pressed
from tools.db import Database
from tools.people.mcp_tokens import Bearer, McpTokens

_TOKEN = re.compile(r"cs_mcp_[A-Za-z0-9_-]{43}")
LAPTOP = "Claude Desktop on Arjun's laptop"


async def _verify(url: str, token: str) -> Bearer | None:
    db = Database(url)
    try:
        return await McpTokens(db).verify(token)
    finally:
        await db.dispose()


def _created(tmp_path: Path, url: str, *args: str) -> tuple[str, str]:
    """Runs `mcp-token create ARGS`; the output and the token on its last line."""
    ran = cli(tmp_path, url, "mcp-token", "create", *args)
    assert ran.code == 0, ran
    last = ran.out.rstrip("\n").splitlines()[-1]
    assert _TOKEN.fullmatch(last), ran.out
    return ran.out, last


def test_create_prints_the_token_alone_on_the_last_line_once(tmp_path: Path, demo_url: str) -> None:
    """The token is the whole last line, printed once; the lines before it say who it means,
    where, as what role, its name, its expiry and how an agent sends it to /mcp."""
    out, token = _created(
        tmp_path,
        demo_url,
        "Fiesta Foods",
        "Arjun@Fiesta.example",
        "--name",
        LAPTOP,
        "--expires",
        "30",
    )
    assert out.count(token) == 1
    assert len(_TOKEN.findall(out)) == 1
    for needle in ("Arjun Mehta", "Fiesta Foods", "manager", LAPTOP, "expires"):
        assert needle in out, needle
    assert "Authorization: Bearer" in out
    assert "http://127.0.0.1:3000/mcp" in out
    # The expiry is said as every time is, in the merchant's zone with its name.
    assert re.search(r"expires  \d{4}-\d\d-\d\d \d\d:\d\d Asia/Kolkata \(in 30 days\)", out), out
    bearer = asyncio.run(_verify(demo_url, token))
    assert bearer is not None
    assert (bearer.tenantid, bearer.personid, bearer.name) == (1, 2, LAPTOP)
    assert bearer.expires_at is not None


def test_create_without_options_names_the_token_and_says_it_never_expires(
    tmp_path: Path, demo_url: str
) -> None:
    """Without --name or --expires the token is called "MCP token" and the output says it
    never expires and how to revoke it."""
    out, token = _created(tmp_path, demo_url, "harbor", "sam@harbor.example")
    assert "MCP token" in out and "never" in out
    assert 'countersign mcp-token revoke "Harbor Books"' in out
    bearer = asyncio.run(_verify(demo_url, token))
    assert bearer is not None and (bearer.personid, bearer.expires_at) == (5, None)


def test_the_mcp_url_follows_the_servers_host_and_port(tmp_path: Path, demo_url: str) -> None:
    """The URL an agent is told to use is where `countersign serve` listens."""
    ran = cli(
        tmp_path,
        demo_url,
        "mcp-token",
        "create",
        "Fiesta Foods",
        "ravi@fiesta.example",
        COUNTERSIGN_HOST="10.1.2.3",
        PORT="8080",
    )
    assert ran.code == 0, ran
    assert "http://10.1.2.3:8080/mcp" in ran.out


def test_list_shows_the_tokens_but_never_the_token_or_its_hash(
    tmp_path: Path, demo_url: str
) -> None:
    """The list names each token's person, name and first characters, and holds neither the
    token nor its hash; another merchant's list does not show it at all."""
    _, token = _created(
        tmp_path, demo_url, "Fiesta Foods", "arjun@fiesta.example", "--name", LAPTOP
    )
    listed = cli(tmp_path, demo_url, "mcp-token", "list", "Fiesta Foods")
    assert listed.code == 0, listed
    header = listed.out.splitlines()[0].split()
    assert header[:3] == ["id", "token", "person"]
    assert {"name", "created", "expires", "last", "used", "revoked"} <= set(header)
    assert "Arjun Mehta" in listed.out and LAPTOP in listed.out
    assert token[:15] + "…" in listed.out
    assert token not in listed.out and token[7:] not in listed.out
    assert hashlib.sha256(token.encode()).hexdigest() not in listed.out
    harbor = cli(tmp_path, demo_url, "mcp-token", "list", "Harbor Books")
    assert harbor.code == 0, harbor
    assert LAPTOP not in harbor.out and token[:15] not in harbor.out
    assert "Harbor Books has no MCP tokens" in harbor.out


def test_revoke_by_the_listed_id_ends_the_token(tmp_path: Path, demo_url: str) -> None:
    """The id a list shows revokes the token: it verifies to nobody and the list says when."""
    _, token = _created(
        tmp_path, demo_url, "Fiesta Foods", "arjun@fiesta.example", "--name", LAPTOP
    )
    row = cli(tmp_path, demo_url, "mcp-token", "list", "Fiesta Foods").out.splitlines()[1]
    short = row.split()[0]
    assert re.fullmatch(r"[0-9a-f]{8}", short), row
    assert " active " in row and row.endswith(" -"), row
    revoked = cli(tmp_path, demo_url, "mcp-token", "revoke", "Fiesta Foods", short)
    assert revoked.code == 0, revoked
    assert "Revoked" in revoked.out and LAPTOP in revoked.out and "Arjun Mehta" in revoked.out
    assert " Asia/Kolkata. " in revoked.out and "UTC" not in revoked.out, revoked.out
    assert asyncio.run(_verify(demo_url, token)) is None
    after = cli(tmp_path, demo_url, "mcp-token", "list", "Fiesta Foods").out.splitlines()[1]
    assert " revoked " in after and re.search(r" \d{4}-\d\d-\d\d \d\d:\d\d$", after), after


def test_another_merchant_cannot_revoke_a_token(tmp_path: Path, demo_url: str) -> None:
    """Revoking Fiesta's token as Harbor Books is one line saying there is no such token, and
    the token still works."""
    _, token = _created(tmp_path, demo_url, "Fiesta Foods", "arjun@fiesta.example")
    prefix = token[:15]
    ran = cli(tmp_path, demo_url, "mcp-token", "revoke", "Harbor Books", prefix)
    assert_one_line_failure(ran, "no MCP token", prefix)
    assert asyncio.run(_verify(demo_url, token)) is not None


def test_an_unknown_email_lists_the_merchants_people(tmp_path: Path, demo_url: str) -> None:
    """A mistyped email is one line naming the merchant and the emails of its people, and no
    other merchant's; no token is made."""
    ran = cli(tmp_path, demo_url, "mcp-token", "create", "Fiesta Foods", "arjun@fiesta.exampel")
    assert_one_line_failure(
        ran, "arjun@fiesta.exampel", "Fiesta Foods", "arjun@fiesta.example", "ravi@fiesta.example"
    )
    assert "sam@harbor.example" not in ran.err
    assert not _TOKEN.search(ran.out + ran.err)
    other = cli(tmp_path, demo_url, "mcp-token", "create", "Fiesta Foods", "sam@harbor.example")
    assert_one_line_failure(other, "sam@harbor.example", "priya@fiesta.example")


def test_a_bad_expiry_or_name_is_a_usage_error(tmp_path: Path, demo_url: str) -> None:
    """--expires 0, a blank --name and a missing action exit 2 with argparse's usage, and make
    no token."""
    for args in (
        ("create", "Fiesta Foods", "arjun@fiesta.example", "--expires", "0"),
        ("create", "Fiesta Foods", "arjun@fiesta.example", "--name", "  "),
        ("create", "Fiesta Foods", "arjun@fiesta.example", "--name", "x" * 101),
        (),
    ):
        ran = cli(tmp_path, demo_url, "mcp-token", *args)
        assert ran.code == 2, args
        assert "usage: countersign mcp-token" in ran.err
        assert not _TOKEN.search(ran.out)
    listed = cli(tmp_path, demo_url, "mcp-token", "list", "Fiesta Foods")
    assert "Fiesta Foods has no MCP tokens" in listed.out


async def _connected(url: str) -> tuple[str, str]:
    """An agent connected as Arjun by the real consent path: his Allow, the code exchanged.
    Returns its access token and its grant's id."""
    db = Database(url)
    try:
        directory = Directory(db)
        await Connections(db).connect(Platform.SLACK, "T0FIESTA", 1)
        await directory.link("slack", "T0FIESTA", "UARJUN", "arjun@fiesta.example")
        grants, consents = Grants(db), Consents(db)
        await grants.register("cli-1", {"client_id": "cli-1", "client_name": "ChatGPT"})
        handle = await consents.open(
            client_id="cli-1", client_name="ChatGPT", redirect_uri="https://chatgpt.com/cb", state=None,
            code_challenge="x", resource="http://127.0.0.1:3000/mcp", scopes=[],
        )  # fmt: skip
        asked = await consents.ask(handle, "arjun@fiesta.example", directory, browser="b")
        assert asked is not None
        assert asked[1] is not None
        pressed = Pressed(asked[0].id, asked[1].userid, "allow")
        assert await consents.decide(pressed, asked[1]) is not None
        outcome = await consents.outcome(handle)
        assert outcome is not None
        assert outcome[1] is not None
        consent = await grants.code(outcome[1])
        assert consent is not None
        issued = await grants.exchange(consent, client_name="ChatGPT")
        assert issued is not None
        return issued.access_token, issued.grant_id
    finally:
        await db.dispose()


async def _verify_grant(url: str, token: str) -> Bearer | None:
    db = Database(url)
    try:
        return await Grants(db).verify(token, resource="http://127.0.0.1:3000/mcp")
    finally:
        await db.dispose()


def test_list_shows_connected_agents_and_revoke_disconnects_one(
    tmp_path: Path, demo_url: str
) -> None:
    """An agent connected by OAuth is listed beside the tokens with its person, client and
    last use; revoking its listed id disconnects it, and its token verifies to nobody."""
    token, grant = asyncio.run(_connected(demo_url))
    listed = cli(tmp_path, demo_url, "mcp-token", "list", "Fiesta Foods")
    assert listed.code == 0, listed
    row = next(line for line in listed.out.splitlines() if line.startswith(grant[:8]))
    assert "Arjun Mehta" in row and "ChatGPT" in row and " active " in row, listed.out
    assert token not in listed.out
    revoked = cli(tmp_path, demo_url, "mcp-token", "revoke", "Fiesta Foods", grant[:8])
    assert revoked.code == 0, revoked
    assert "Disconnected ChatGPT" in revoked.out
    assert asyncio.run(_verify_grant(demo_url, token)) is None
    after = cli(tmp_path, demo_url, "mcp-token", "list", "Fiesta Foods").out
    assert " revoked " in next(line for line in after.splitlines() if line.startswith(grant[:8]))
