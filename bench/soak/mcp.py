"""The soak's MCP phase: writes to a merchant's MCP server, the server killed mid-call each time.

The demo supplier ledger (``ledger``) serves streamable HTTP on loopback behind a tap of
the soak's own, and is connected as the merchant's ``ledger`` source. Arjun asks in Slack for
a payment (``use ledger__record_payment with …``) and approves its card; the server that
executes it calls the ledger through the tap. The tap lets every request through but the
payment itself: that one it either passes on and, once the ledger starts answering, kills the
ledger and cuts the connection (the payment made, its answer lost), or kills the ledger
before passing it on (nothing made); then the ledger is started again. Either way Countersign
sent the call and heard nothing back, so each card must end "outcome unknown": never shown
done, and never sent twice (``bench.soak.checks`` counts the ledger's payments per idempotency
key, which is the card's id).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys
import time
from asyncio.subprocess import DEVNULL, Process
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.soak.load import Load
from bench.soak.slack import card_of
from tools.db import Database
from tools.toolsets.mcp import SourceConfig, Sources

__all__ = ["CARDS", "LedgerPhase", "ledger_phase"]

CARDS = int(os.environ.get("COUNTERSIGN_SOAK_MCP_CARDS", "20"))
# One payment at a time: each kills the one ledger process, which must be up again for the next.
_LANES = 1
_READY_S = 60.0
_DECIDED_S = 60.0
_SOURCE = {
    "name": "ledger",
    "trust_annotations": True,
    "timeout": 10,
    "rules": {
        "record_payment": {
            "amount": "amount",
            "preview": {"kind": "tool", "name": "preview_payment"},
        }
    },
}
# What a payment's ``tools/call`` carries in its JSON-RPC body (the preview is another tool).
_CALL, _PAYMENT = b'"tools/call"', b'"record_payment"'
# The card's id, sent as the call's idempotency key.
_KEY = re.compile(rb'"dev\.countersign/idempotency-key"\s*:\s*"([0-9a-f]+)"')


@dataclass
class LedgerPhase:
    """The ledger server, how often it was killed mid-call, and the cards that were sent to it."""

    workdir: Path
    port: int = 0
    process: Process | None = None
    kills: int = 0
    cards: list[str] = field(default_factory=list)
    # The cards whose payment call the ledger died under, by the call's idempotency key.
    killed: list[str] = field(default_factory=list)
    asked: int = 0
    _payments: int = 0  # payment calls seen, to alternate how each dies
    up: asyncio.Event = field(default_factory=asyncio.Event)
    restarting: asyncio.Task[None] | None = None

    @property
    def db(self) -> Path:
        return self.workdir / "ledger.db"

    async def start(self) -> None:
        """Starts the ledger on its port and waits until it accepts connections."""
        log = (self.workdir / "ledger.log").open("ab")
        try:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "ledger",
                "--db",
                str(self.db),
                "--http",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                stdin=DEVNULL,
                stdout=log,
                stderr=log,
            )
        finally:
            log.close()
        deadline = time.monotonic() + _READY_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                self.up.set()
                return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"the ledger did not listen within {_READY_S:.0f} s")

    async def kill(self) -> None:
        """SIGKILL: the ledger ends mid-call, as a crashed server does."""
        self.up.clear()
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()
            self.kills += 1

    async def stop(self) -> None:
        """Stops the ledger, and a restart still on its way first (it outlived the phase)."""
        if self.restarting is not None:
            with contextlib.suppress(RuntimeError):
                await self.restarting
        if self.process is not None and self.process.returncode is None:
            self.process.terminate()
            await self.process.wait()

    async def _pipe(
        self, client: asyncio.StreamReader, to: asyncio.StreamWriter, dying: asyncio.Event
    ) -> str | None:
        """Client to ledger until the client is done (None), or until a payment's call, where
        the ledger dies: "before" it reaches it, or "after" (``dying`` set, the call passed on)."""
        seen = b""
        while chunk := await client.read(65536):
            seen = seen[-400:] + chunk
            if _CALL in seen and _PAYMENT in seen:
                self._payments += 1
                key = _KEY.search(seen)
                if key is not None:
                    self.killed.append(key[1].decode())
                if self._payments % 2:
                    return "before"
                dying.set()
                to.write(chunk)
                await to.drain()
                return "after"
            to.write(chunk)
            await to.drain()
        return None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection from Countersign, passed to the ledger and back (see the module)."""
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            writer.transport.abort()  # refused, as the ledger itself would while down
            return
        dying, answering = asyncio.Event(), asyncio.Event()

        async def back() -> None:
            with contextlib.suppress(OSError):
                while chunk := await up_reader.read(65536):
                    if dying.is_set():
                        break  # the ledger's answer to the payment: never passed on
                    writer.write(chunk)
                    await writer.drain()
            answering.set()
            if not dying.is_set():
                # The ledger closed (or was killed under another call): so does this side, as
                # its own socket would have, or a kept-alive connection waits on nothing.
                writer.close()

        relay = asyncio.create_task(back())
        try:
            verdict = await self._pipe(reader, up_writer, dying)
            if verdict == "after":
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(answering.wait(), 10)  # it ran: now it dies
            if verdict is not None:
                await self.kill()
                writer.transport.abort()  # the answer never reaches Countersign
                self.restarting = asyncio.create_task(self.start())
        except OSError:
            pass
        finally:
            relay.cancel()
            up_writer.close()


@contextlib.asynccontextmanager
async def _tapped(phase: LedgerPhase) -> AsyncIterator[str]:
    """The ledger running behind the tap; yields the tap's ``/mcp`` URL."""
    phase.port = _free_port()
    await phase.start()
    tap = await asyncio.start_server(phase.serve, "127.0.0.1", 0)
    port = tap.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        tap.close()
        await phase.stop()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def ledger_phase(phase: LedgerPhase, load: Load, dsn: str) -> None:
    """Connects the ledger as the merchant's source, then pays ``CARDS`` times through Slack."""
    async with _tapped(phase) as url:
        db = Database(dsn.replace("postgresql://", "postgresql+asyncpg://", 1))
        try:
            await Sources(db).put(1, SourceConfig.model_validate({**_SOURCE, "url": url}))
        finally:
            await db.dispose()
        numbers = iter(range(CARDS))

        async def lane() -> None:
            for number in numbers:
                await _pay(phase, load, number)

        await asyncio.gather(*(lane() for _ in range(_LANES)))


async def _pay(phase: LedgerPhase, load: Load, number: int) -> None:
    """Asks for one payment (again while the ledger is restarting), approves its card, and
    waits until the card is decided."""
    said = f"use ledger__record_payment with supplier_id=SUP-001 amount=100 reference=SOAK-{number}"
    for _ in range(3):
        await asyncio.wait_for(phase.up.wait(), _READY_S)
        phase.asked += 1
        card = await load.card(await load.mention("UARJUN", said))
        if card is not None:
            break
    else:
        return
    cid = card_of(card)
    assert cid is not None
    phase.cards.append(cid)
    await load.press("UARJUN", card)
    deadline = time.monotonic() + _DECIDED_S
    while time.monotonic() < deadline:
        shown = load.slack.indexed.message(card.channel, card.ts)
        if card_of(shown) is None:
            return  # no buttons left: decided and shown
        await load.slack.wait(0.5)
