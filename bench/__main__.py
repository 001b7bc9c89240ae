"""Runs the benchmarks named on the command line (all by default) and prints the table."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import platform
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.stage import quiet_logs, scratch
from bench.stats import Figure, render

Bench = Callable[[Path], Awaitable[list[Figure]]]

# In the order they run; each module's ``run`` is imported only when asked for.
BENCHES = (
    "ack",
    "press_load",
    "cycle",
    "card_tokens",
    "burst",
    "memory",
    "tokens",
    "mcp_sources",
    "mcp_endpoint",
)


def _bench(name: str) -> Bench:
    run: Bench = importlib.import_module(f"bench.{name}").run
    return run


def _machine() -> str:
    with open("/proc/meminfo") as meminfo:
        total_kib = int(meminfo.readline().split()[1])
    return (
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs (nproc), {total_kib / 1024 / 1024:.1f} GiB RAM, "
        f"{platform.system()} {platform.release()}; load average at start "
        + " / ".join(f"{load:.1f}" for load in os.getloadavg())
    )


async def _main(names: list[str]) -> list[Figure]:
    figures: list[Figure] = []
    with scratch() as workdir:
        for name in names:
            started = time.perf_counter()
            got = await _bench(name)(workdir)
            figures.extend(got)
            print(
                f"\n## {name} ({time.perf_counter() - started:.0f} s)\n\n{render(got)}", flush=True
            )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"benchmarks to run (default: all): {', '.join(BENCHES)}",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    args = parser.parse_args()
    names: list[str] = args.names or list(BENCHES)
    unknown = sorted(set(names) - set(BENCHES))
    if unknown:
        parser.error(f"no benchmark named {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    quiet_logs()
    started = time.perf_counter()
    print(f"# Countersign benchmarks — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n\n{_machine()}")
    figures = asyncio.run(_main(names))
    print(f"\n## All figures ({time.perf_counter() - started:.0f} s)\n\n{render(figures)}")
    if args.json:
        rows = [
            {
                "name": f.name,
                "unit": f.unit,
                "product": f.product,
                "baseline": f.baseline,
                "ratios": f.ratios,
                "target_ratio": f.target_ratio,
            }
            for f in figures
        ]
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
