"""Starts a throwaway PostgreSQL cluster on loopback for the test run, and stops it after.

PostgreSQL refuses to run as root, so the cluster runs as a dedicated system user (created if
missing). Its data directory, socket and port are the run's own; nothing else is touched.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["PostgresCluster", "find_bindir"]

_USER = "countersign-pg"


def find_bindir() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_user() -> dict[str, Any]:
    """Popen options that drop root for the server (signals then reach postgres itself)."""
    if os.geteuid() != 0:
        return {}
    account = pwd.getpwnam(_USER)
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


def _ensure_user() -> None:
    if os.geteuid() != 0:
        return
    if subprocess.run(["id", _USER], capture_output=True, check=False).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", _USER], check=True)


@dataclass
class PostgresCluster:
    bindir: Path
    root: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    log: BinaryIO | None = None

    @classmethod
    def start(cls) -> PostgresCluster:
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError(
                "PostgreSQL is not installed: run `make deps` (apt-get install postgresql)"
            )
        _ensure_user()
        root = Path(tempfile.mkdtemp(prefix="countersign-pg-"))
        root.chmod(0o755)
        if os.geteuid() == 0:
            shutil.chown(root, _USER)
        cluster = cls(bindir, root, _free_port())
        cluster._init()
        cluster._run()
        return cluster

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://countersign@127.0.0.1:{self.port}/{database}"

    def _init(self) -> None:
        subprocess.run(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "countersign",
                "--auth=trust",
                "--encoding=UTF8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
            **_as_user(),
        )

    def _run(self) -> None:
        self.log = open(self.root / "postgres.log", "ab")  # noqa: SIM115 (lives as long as the server)
        self.process = subprocess.Popen(
            [
                str(self.bindir / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-k",
                str(self.root),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=300",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            **_as_user(),
        )
        deadline = time.monotonic() + 120  # a loaded machine starts PostgreSQL slowly
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"PostgreSQL exited: {(self.root / 'postgres.log').read_text()}")
            ready = subprocess.run(
                [str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                capture_output=True,
                check=False,
            )
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("PostgreSQL did not become ready within 30 s")

    def stop(self) -> None:
        """Fast shutdown (SIGINT), then removes the data directory."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._close_log()
        shutil.rmtree(self.root, ignore_errors=True)

    def pause(self) -> None:
        """Stops the server but keeps its data, to simulate the database going away."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(2)
            self.process.wait(timeout=20)
        self._close_log()

    def _close_log(self) -> None:
        if self.log is not None:
            self.log.close()
            self.log = None

    def resume(self) -> None:
        self._run()
