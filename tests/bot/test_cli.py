"""The ``countersign`` command line against SQLite and PostgreSQL: its parser and commands in the
test's process, and the real process where only one shows it (its entry point, its start-up)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest
import structlog
from pydantic import BaseModel
from sqlalchemy import func, select

from tests.support.postgres import PostgresCluster
from tools.audit.log import AuditEntry, AuditLog, Outcome
from tools.cards.tokens import CardSigner
from tools.db import Database, ProposalRow
from tools.errors import UnknownToolError
from tools.people.directory import Directory
from tools.tool import Result, Tool, ToolContext
from tools.toolsets.merchant import DEFAULT_AGENT, build_registry
from tools.toolsets.merchant.models import Branch, Identity, Order, Person, Tenant

# Each test starts `countersign` in a process of its own, at least once.
pytestmark = pytest.mark.slow

# Variables Settings reads; cleared so the developer's own environment cannot steer a test.
_SETTINGS_PREFIXES = ("SLACK_", "MICROSOFT_", "COUNTERSIGN_", "OPENAI_", "ANTHROPIC_")
_SETTINGS_NAMES = {"DATABASE_URL", "PORT", "LOG_LEVEL"}
_HARBOR_CARD = "ab" * 16


@dataclass
class Ran:
    code: int
    out: str
    err: str


def _env(database_url: str, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.upper().startswith(_SETTINGS_PREFIXES) and key.upper() not in _SETTINGS_NAMES
    }
    return {**env, "DATABASE_URL": database_url, **extra}


def cli_process(cwd: Path, database_url: str, *args: str, **extra: str) -> Ran:
    """Runs ``python -m bot ARGS`` in ``cwd`` (so no .env or key file of the project is used)."""
    done = subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=cwd,
        env=_env(database_url, **extra),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def cli(cwd: Path, database_url: str, *args: str, **extra: str) -> Ran:
    """``countersign ARGS`` as ``cli_process`` runs it, but in this process: the parser, then
    the command, with the same environment and working directory, stdout and stderr captured.

    A process start is seconds on a busy machine, and the command tests' hundred of them were
    minutes of the suite. What only a real process shows (its entry point, its start-up and
    exit while serving) stays with ``cli_process``.
    """
    from bot.cli.dispatch import execute
    from bot.cli.parser import build_parser

    def run() -> Ran:
        out, err = io.StringIO(), io.StringIO()
        saved_env, saved_logs = dict(os.environ), structlog.get_config()
        os.environ.clear()
        os.environ.update(_env(database_url, **extra))
        try:
            with contextlib.chdir(cwd), redirect_stdout(out), redirect_stderr(err):
                try:
                    code = execute(build_parser().parse_args(list(args)))
                except SystemExit as exited:  # argparse's usage errors
                    code = int(exited.code or 0)
        finally:
            os.environ.clear()
            os.environ.update(saved_env)
            structlog.reset_defaults()
            structlog.configure(**saved_logs)
        return Ran(code, out.getvalue(), err.getvalue())

    # A thread of its own: the command runs its own event loop (asyncio.run), which an async
    # test's running loop would refuse.
    with ThreadPoolExecutor(1) as one:
        return one.submit(run).result(timeout=180)


def assert_one_line_failure(ran: Ran, *needles: str) -> None:
    assert ran.code == 1, ran
    assert "Traceback" not in ran.err
    assert len(ran.err.strip().splitlines()) == 1, ran.err
    for needle in needles:
        assert needle in ran.err


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'countersign.db'}"


@pytest.fixture
def pg_url(postgres: PostgresCluster) -> Iterator[str]:
    name = f"cs_cli_{os.getpid()}"
    admin = postgres.url().replace("+asyncpg", "")

    async def execute(sql: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(execute(f'CREATE DATABASE "{name}"'))
    try:
        yield postgres.url(name)
    finally:
        asyncio.run(execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- database helpers (run in the test process, on the database the CLI used) ---------------


async def _counts(url: str) -> dict[str, int]:
    db = Database(url)
    try:
        async with db.session() as session:
            return {
                model.__name__: int(
                    await session.scalar(select(func.count()).select_from(model)) or 0
                )
                for model in (Tenant, Person, Branch, Order, Identity)
            }
    finally:
        await db.dispose()


class _NoArgs(BaseModel):
    pass


async def _count_branches(ctx: ToolContext, args: _NoArgs) -> Result:
    count = len((await ctx.session.scalars(select(Branch))).all())
    return Result(rows=[], count=count, scope=f"{ctx.tenant_name}: all {count} branches")


# A read tool of the test's own, so the audit rows do not depend on the merchant toolset.
_COUNT_TOOL = Tool(
    name="cli_test_count_branches",
    description="Counts branches.",
    args=_NoArgs,
    handler=_count_branches,
)


async def _make_audit_rows(url: str) -> None:
    """A read and a refusal through the registry as Arjun, then a Harbor entry with a card."""
    db = Database(url)
    try:
        registry = build_registry(db, CardSigner(["a-test-secret-of-32-characters!!"]))
        registry.register(_COUNT_TOOL)
        arjun = await Directory(db).by_email("arjun@fiesta.example")
        assert arjun is not None
        await registry.call(DEFAULT_AGENT, _COUNT_TOOL.name, {}, arjun)
        with pytest.raises(UnknownToolError):
            await registry.call(DEFAULT_AGENT, "no_such_tool", {}, arjun)
        await AuditLog(db).write(
            AuditEntry(
                at=datetime.now(UTC),
                agent="countersign",
                tool="refund_order",
                userid=5,
                tenantid=2,
                scope="write",
                outcome=Outcome.PROPOSED,
                detail="Refund $24.99 of order 81 for Olivia B at Waterfront, " * 3,
                card_id=_HARBOR_CARD,
                took_ms=12.4,
            )
        )
    finally:
        await db.dispose()


async def _resolve(url: str, platform: str, installation: str, user: str) -> tuple[int, str] | None:
    db = Database(url)
    try:
        caller = await Directory(db).resolve(platform, installation, user)
        return (caller.userid, caller.name) if caller else None
    finally:
        await db.dispose()


async def _leave_card_executing(url: str, card_id: str) -> None:
    now = datetime.now(UTC)
    db = Database(url)
    try:
        async with db.session() as session, session.begin():
            session.add(
                ProposalRow(
                    id=card_id,
                    tool="close_branch",
                    agent="countersign",
                    user_id=2,
                    tenant_id=1,
                    args={"branch": 3},
                    digest="x",
                    summary="Close Whitefield (branch 3)",
                    details=[],
                    warning=None,
                    status="executing",
                    created_at=now,
                    expires_at=now + timedelta(minutes=30),
                )
            )
    finally:
        await db.dispose()


async def _card_status(url: str, card_id: str) -> str | None:
    db = Database(url)
    try:
        async with db.session() as session:
            row = await session.get(ProposalRow, card_id)
            return row.status if row else None
    finally:
        await db.dispose()


# --- usage -------------------------------------------------------------------------------------


def test_help_lists_every_command(tmp_path: Path, sqlite_url: str) -> None:
    """`--help` exits 0 and names every command."""
    ran = cli_process(tmp_path, sqlite_url, "--help")
    assert ran.code == 0
    for command in ("db", "demo", "link", "audit", "serve", "reconcile"):
        assert f"    {command}" in ran.out


def test_missing_command_and_bad_arguments_are_usage_errors(
    tmp_path: Path, sqlite_url: str
) -> None:
    """No command, an unknown platform, a --limit or --workers of 0 exit 2 with argparse's usage."""
    for args in (
        (),
        ("link", "irc", "T1", "U1", "a@b.example"),
        ("audit", "--limit", "0"),
        ("serve", "--workers", "0"),
    ):
        ran = cli(tmp_path, sqlite_url, *args)
        assert ran.code == 2, args
        assert "usage: countersign" in ran.err


# --- SQLite ------------------------------------------------------------------------------------


def test_db_upgrade_then_demo_twice_is_idempotent(tmp_path: Path, sqlite_url: str) -> None:
    """`db upgrade` creates the schema; `demo` loads 90 orders once and changes nothing the second time."""
    upgraded = cli(tmp_path, sqlite_url, "db", "upgrade")
    assert upgraded.code == 0, upgraded
    assert "is up to date" in upgraded.out
    assert asyncio.run(_counts(sqlite_url))["Tenant"] == 0

    first = cli(tmp_path, sqlite_url, "demo")
    assert first.code == 0, first
    assert "Loaded Fiesta Foods and Harbor Books (90 orders)" in first.out
    after_first = asyncio.run(_counts(sqlite_url))
    assert after_first == {"Tenant": 2, "Person": 5, "Branch": 6, "Order": 90, "Identity": 0}

    second = cli(tmp_path, sqlite_url, "demo")
    assert second.code == 0, second
    assert "Demo data already present" in second.out
    assert asyncio.run(_counts(sqlite_url)) == after_first


def test_demo_reset_starts_afresh_and_forgets_the_sandboxs_messages(
    tmp_path: Path, demo_url: str
) -> None:
    """`demo --reset` says what it did and removes the sandbox's saved workspace, whose
    messages carried cards the reset deleted."""
    saved = tmp_path / ".countersign-sandbox.json"
    saved.write_text("{}")
    ran = cli(tmp_path, demo_url, "demo", "--reset")
    assert ran.code == 0, ran
    assert "Started the demo afresh" in ran.out
    assert "(90 orders)" in ran.out
    assert not saved.exists()


def test_time_zone_shows_sets_and_refuses_what_is_no_zone(tmp_path: Path, demo_url: str) -> None:
    """`time-zone` shows the demo merchant's zone from its city, sets another, and refuses a
    name that is no zone with one line that suggests real ones."""
    shown = cli(tmp_path, demo_url, "time-zone", "Fiesta Foods")
    assert shown.out.strip() == "Fiesta Foods keeps the days of Asia/Kolkata."
    saved = cli(tmp_path, demo_url, "time-zone", "Harbor Books", "America/Los_Angeles")
    assert saved.code == 0 and "keeps the days of America/Los_Angeles" in saved.out
    assert "America/Los_Angeles" in cli(tmp_path, demo_url, "time-zone", "2").out
    refused = cli(tmp_path, demo_url, "time-zone", "Fiesta Foods", "Kolkata")
    assert_one_line_failure(refused, "'Kolkata' is not a time zone", "Asia/Kolkata")


def test_link_then_resolve_finds_the_person(tmp_path: Path, demo_url: str) -> None:
    """`link` prints who was linked, and Directory.resolve then returns that person."""
    refused = cli(tmp_path, demo_url, "link", "slack", "T123", "U456", "Arjun@Fiesta.example")
    assert_one_line_failure(refused, "not connected", 'countersign connect slack T123 "<merchant>"')
    assert cli(tmp_path, demo_url, "connect", "slack", "T123", "Fiesta Foods").code == 0
    ran = cli(tmp_path, demo_url, "link", "slack", "T123", "U456", "Arjun@Fiesta.example")
    assert ran.code == 0, ran
    assert ran.out.strip() == "Linked slack T123/U456 to Arjun Mehta (manager, Fiesta Foods)"
    assert asyncio.run(_resolve(demo_url, "slack", "T123", "U456")) == (2, "Arjun Mehta")
    again = cli(tmp_path, demo_url, "link", "slack", "T123", "U456", "arjun@fiesta.example")
    assert again.code == 0
    assert asyncio.run(_counts(demo_url))["Identity"] == 1


def test_link_of_unknown_email_exits_1_and_links_nobody(tmp_path: Path, demo_url: str) -> None:
    """An email nobody has is one readable line with exit 1, and no identity is stored."""
    ran = cli(tmp_path, demo_url, "link", "slack", "T0FIESTA", "U999", "nobody@nowhere.example")
    assert_one_line_failure(ran, "Nobody with the email nobody@nowhere.example", "owner to add you")
    other = cli(tmp_path, demo_url, "link", "slack", "T0FIESTA", "U998", "sam@harbor.example")
    assert_one_line_failure(other, "Nobody with the email sam@harbor.example")
    assert ran.out == ""
    assert asyncio.run(_counts(demo_url))["Identity"] == 0


def test_audit_prints_registry_calls_newest_first(tmp_path: Path, demo_url: str) -> None:
    """`audit` shows real audit rows as a table, newest first, with names resolved."""
    assert "No audit entries yet." in cli(tmp_path, demo_url, "audit").out
    asyncio.run(_make_audit_rows(demo_url))

    ran = cli(tmp_path, demo_url, "audit")
    assert ran.code == 0, ran
    header, harbor, refused, read = ran.out.splitlines()[:4]
    assert header.split() == [
        "TIME",
        "(UTC)",
        "AGENT",
        "TOOL",
        "USER",
        "TENANT",
        "SCOPE",
        "OUTCOME",
        "DETAIL",
        "ROWS",
        "MS",
        "CARD",
    ]
    assert "Sam Lee" in harbor and "Harbor Books" in harbor and "proposed" in harbor
    assert harbor.rstrip().endswith(_HARBOR_CARD[:8])
    assert "…" in harbor  # the long detail is cut, not wrapped
    assert "no_such_tool" in refused and "refused" in refused and "Arjun Mehta" in refused
    assert _COUNT_TOOL.name in read and "Fiesta Foods" in read and " ok " in read
    assert " 4 " in read  # the ROWS column: Fiesta Foods has four branches
    assert "3 entries." in ran.out


def test_audit_filters_by_tenant_card_and_limit(tmp_path: Path, demo_url: str) -> None:
    """--tenant takes a name or an id, --card takes the short id shown, --limit cuts the list."""
    asyncio.run(_make_audit_rows(demo_url))

    fiesta = cli(tmp_path, demo_url, "audit", "--tenant", "fiesta foods")
    assert fiesta.code == 0, fiesta
    assert "Arjun Mehta" in fiesta.out and "Sam Lee" not in fiesta.out
    assert "2 entries for Fiesta Foods." in fiesta.out

    harbor = cli(tmp_path, demo_url, "audit", "--tenant", "2")
    assert "Sam Lee" in harbor.out and "Arjun Mehta" not in harbor.out

    card = cli(tmp_path, demo_url, "audit", "--card", _HARBOR_CARD[:8])
    assert card.code == 0, card
    assert len(card.out.splitlines()) == 4  # header, one row, blank, summary
    assert f"1 entry about card {_HARBOR_CARD[:8]}." in card.out

    newest = cli(tmp_path, demo_url, "audit", "--limit", "1")
    assert len(newest.out.splitlines()) == 4
    assert "use --limit N to see more" in newest.out

    unknown = cli(tmp_path, demo_url, "audit", "--tenant", "Nowhere Cafe")
    assert_one_line_failure(unknown, "There is no merchant 'Nowhere Cafe'", "1 (Fiesta Foods)")


def test_reconcile_settles_a_card_left_executing(tmp_path: Path, demo_url: str) -> None:
    """`reconcile` marks a card a dead process left executing as interrupted, once; logs go to stderr."""
    card_id = "cd" * 16
    asyncio.run(_leave_card_executing(demo_url, card_id))

    ran = cli(tmp_path, demo_url, "reconcile")
    assert ran.code == 0, ran
    assert "Settled 1 card(s)" in ran.out
    assert f"card {card_id[:8]} (close_branch, Arjun Mehta, Fiesta Foods): interrupted" in ran.out
    assert "audited" in ran.err and "audited" not in ran.out  # structlog writes to stderr
    assert asyncio.run(_card_status(demo_url, card_id)) == "interrupted"

    again = cli(tmp_path, demo_url, "reconcile")
    assert "nothing needed settling" in again.out


# --- failures a person can fix ---------------------------------------------------------------


def test_unmigrated_database_says_to_run_db_upgrade(tmp_path: Path, sqlite_url: str) -> None:
    """A command on an empty database says to run `countersign db upgrade`, exit 1, no traceback."""
    ran = cli(tmp_path, sqlite_url, "link", "slack", "T1", "U1", "arjun@fiesta.example")
    assert_one_line_failure(ran, "has no Countersign tables yet", "countersign db upgrade")


def test_malformed_database_url_exits_1(tmp_path: Path) -> None:
    """A DATABASE_URL that is not a URL, or names a driver we lack, is one line naming the variable."""
    for url in ("not a url at all", "postgres://someone:pw@db.example/shop"):
        ran = cli(tmp_path, url, "db", "upgrade")
        assert_one_line_failure(ran, "DATABASE_URL", "postgresql+asyncpg://")
        assert "pw@" not in ran.err


def test_unreachable_database_exits_1_without_the_password(tmp_path: Path) -> None:
    """Nothing listening at DATABASE_URL is exit 1 with a readable line; the password is masked."""
    url = f"postgresql+asyncpg://shop:hunter2@127.0.0.1:{_closed_port()}/shop"
    for args in (("db", "upgrade"), ("audit",)):
        ran = cli(tmp_path, url, *args)
        assert_one_line_failure(ran, "Could not use the database", "running and reachable")
        assert "hunter2" not in ran.err


def test_contradictory_settings_name_the_variable(tmp_path: Path, sqlite_url: str) -> None:
    """SLACK_BOT_TOKEN without COUNTERSIGN_SECRET stops every command with exit 1 naming it."""
    ran = cli(tmp_path, sqlite_url, "audit", SLACK_BOT_TOKEN="xoxb-test")
    assert_one_line_failure(ran, "COUNTERSIGN_SECRET")


def test_unknown_log_level_exits_1(tmp_path: Path, sqlite_url: str) -> None:
    """LOG_LEVEL that names no level is one line listing the levels that exist."""
    ran = cli(tmp_path, sqlite_url, "audit", LOG_LEVEL="chatty")
    assert_one_line_failure(ran, "LOG_LEVEL='chatty'", "DEBUG, INFO")


# --- serve -------------------------------------------------------------------------------------


def test_serve_with_no_surface_configured_names_the_variables(
    tmp_path: Path, sqlite_url: str
) -> None:
    """`serve` with neither Slack nor Teams settings is one line naming what to set."""
    assert cli(tmp_path, sqlite_url, "db", "upgrade").code == 0
    ran = cli(tmp_path, sqlite_url, "serve")
    assert_one_line_failure(ran, "SLACK_BOT_TOKEN", "MICROSOFT_APP_ID")


def _on_a_busy_port(tmp_path: Path, sqlite_url: str, command: str) -> tuple[str, Ran]:
    """Runs ``command`` with Slack settings while another socket holds its port."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        ran = cli_process(
            tmp_path,
            sqlite_url,
            command,
            PORT=port,
            SLACK_BOT_TOKEN="xoxb-not-used",
            SLACK_SIGNING_SECRET="signing-secret-not-used",
            COUNTERSIGN_SECRET="card-secret-for-the-busy-port-test",
            LOG_LEVEL="ERROR",
        )
    return port, ran


def test_serve_on_a_busy_port_says_which(tmp_path: Path, sqlite_url: str) -> None:
    """A port already in use is one line naming the port and PORT."""
    assert cli(tmp_path, sqlite_url, "db", "upgrade").code == 0
    port, ran = _on_a_busy_port(tmp_path, sqlite_url, "serve")
    assert_one_line_failure(ran, f"Port {port} on 127.0.0.1 is already in use", "PORT")


def test_run_with_slack_credentials_loads_the_demo_then_serves(
    tmp_path: Path, sqlite_url: str
) -> None:
    """`run` with Slack settings loads the demo, then serves as `serve` does (here: a busy port)."""
    port, ran = _on_a_busy_port(tmp_path, sqlite_url, "run")
    assert "Loaded Fiesta Foods and Harbor Books" in ran.out, ran
    assert_one_line_failure(ran, f"Port {port} on 127.0.0.1 is already in use", "PORT")


# --- PostgreSQL --------------------------------------------------------------------------------


def test_postgres_upgrade_demo_link_and_audit(tmp_path: Path, pg_url: str) -> None:
    """The whole set-up flow works on PostgreSQL: migrate, demo twice, link, audit."""
    assert cli(tmp_path, pg_url, "db", "upgrade").code == 0
    first = cli(tmp_path, pg_url, "demo")
    assert "Loaded Fiesta Foods and Harbor Books (90 orders)" in first.out, first
    counts = asyncio.run(_counts(pg_url))
    assert counts["Order"] == 90
    assert "Demo data already present" in cli(tmp_path, pg_url, "demo").out
    assert asyncio.run(_counts(pg_url)) == counts

    assert cli(tmp_path, pg_url, "connect", "teams", "tenant-1", "Harbor Books").code == 0
    linked = cli(tmp_path, pg_url, "link", "teams", "tenant-1", "aad-42", "sam@harbor.example")
    assert linked.out.strip() == "Linked teams tenant-1/aad-42 to Sam Lee (owner, Harbor Books)"
    assert asyncio.run(_resolve(pg_url, "teams", "tenant-1", "aad-42")) == (5, "Sam Lee")
    unknown = cli(tmp_path, pg_url, "link", "slack", "T0FIESTA", "U1", "nobody@nowhere.example")
    assert_one_line_failure(unknown, "Nobody with the email nobody@nowhere.example")

    asyncio.run(_make_audit_rows(pg_url))
    audit = cli(tmp_path, pg_url, "audit", "--tenant", "Fiesta")
    assert audit.code == 0, audit
    assert _COUNT_TOOL.name in audit.out and "Arjun Mehta" in audit.out
    assert "Sam Lee" not in audit.out
