"""Benchmark of the desktop ⇄ runtime wire, over the real authenticated local socket.

The server is the runtime's JSON-RPC code in its own process (tests/support/rpc_peer.py). Measures:

* round-trip latency of a no-op method, one call at a time (p50, p99), with the asyncio client and
  with the desktop's Qt client;
* server → client notification throughput into each client, and for the Qt client the longest gap
  of a 10 ms ``QTimer`` heartbeat while the notifications pour in.

Run: ``.venv/bin/python -m tests.benchmarks.bench_ipc`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from contracts.ipc import eventloop
from tests.benchmarks.figures import TARGETS, percentile, report
from tests.support.peers import start_connected_peer, stop

REPO = Path(__file__).resolve().parents[2]


async def measure_asyncio(calls: int, notifications: int) -> dict[str, float]:
    received = 0

    def count(_method: str, _params: Any) -> None:
        nonlocal received
        received += 1

    client, process = await start_connected_peer(on_notification=count)
    async with client:
        for _ in range(min(500, calls)):
            await client.call("noop")
        samples = []
        for _ in range(calls):
            started = time.perf_counter()
            await client.call("noop")
            samples.append(time.perf_counter() - started)
        started = time.perf_counter()
        await client.call("emit", {"count": notifications}, timeout=120)
        elapsed = time.perf_counter() - started
        if received != notifications:
            raise RuntimeError(f"expected {notifications} notifications, received {received}")
    await stop(process)
    return {
        "asyncio_p50_us": statistics.median(samples) * 1e6,
        "asyncio_p99_us": percentile(samples, 0.99) * 1e6,
        "asyncio_notifications_per_s": notifications / elapsed,
    }


def measure_qt(calls: int, notifications: int) -> dict[str, float]:
    """The Qt client runs in its own process: a Qt event loop should not share ours."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_ipc_qt",
            "--calls",
            str(calls),
            "--notifications",
            str(notifications),
            "--json",
        ],
        cwd=REPO,
        env={**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    figures: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=5000, help="sequential no-op calls per client")
    parser.add_argument("--notifications", type=int, default=200_000, help="notifications per client")
    parser.add_argument("--skip-qt", action="store_true", help="measure the asyncio client only")
    args = parser.parse_args(argv)
    print(f"Cowork IPC benchmark: {args.calls} calls, {args.notifications} notifications per client")
    figures = eventloop.run(measure_asyncio(args.calls, args.notifications))
    if not args.skip_qt:
        figures |= measure_qt(args.calls, args.notifications)
    print(report(figures, TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
