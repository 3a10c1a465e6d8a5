"""Benchmark of the desktop's Qt client (desktop.ipc) on the real authenticated local socket.

The server is the runtime's JSON-RPC code in its own process (tests/support/rpc_peer.py), connected
back to a real ``RuntimeServer``; the client runs on a qasync event loop, as in the app. Measures:

* round-trip latency of a no-op call, one call at a time, after a warm-up (p50, p99);
* notifications per second into the ``notification`` signal (one Python slot counting them), while a
  10 ms ``QTimer`` heartbeat runs: the longest gap between two of its ticks is how long the UI could
  have been frozen by the flood.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_ipc_qt`` (``--help`` for
sizes). ``tests/benchmarks/bench_ipc.py`` runs it with ``--json`` beside the asyncio client.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from contracts.ipc.handshake import SECRET_ENV
from desktop.ipc import RuntimeServer
from tests.benchmarks.figures import percentile, report

REPO = Path(__file__).resolve().parents[2]
HEARTBEAT_MS = 10


async def measure(server: RuntimeServer, calls: int, notifications: int) -> dict[str, float]:
    client = await server.accept(timeout=30)
    received = 0

    def count(_method: str, _params: Any) -> None:
        nonlocal received
        received += 1

    client.notification.connect(count)

    for _ in range(min(500, calls)):
        await client.call("noop")
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await client.call("noop")
        samples.append(time.perf_counter() - started)

    ticks: list[float] = []
    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
    heartbeat.start()
    started = time.perf_counter()
    await client.call("emit", {"count": notifications}, timeout=600)
    elapsed = time.perf_counter() - started
    heartbeat.stop()
    await client.close()
    if received != notifications:
        raise RuntimeError(f"expected {notifications} notifications, received {received}")
    # The stretches from the flood's start to the first tick and from the last tick to its end count too.
    moments = [started, *ticks, started + elapsed]
    return {
        "qt_p50_us": statistics.median(samples) * 1e6,
        "qt_p99_us": percentile(samples, 0.99) * 1e6,
        "qt_notifications_per_s": notifications / elapsed,
        "qt_max_heartbeat_stall_ms": max(b - a for a, b in itertools.pairwise(moments)) * 1e3,
    }


def run(calls: int = 2000, notifications: int = 100_000) -> dict[str, float]:
    """Measure on a fresh qasync loop (on this process's QApplication, made if there is none)."""
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    server = RuntimeServer()
    peer = subprocess.Popen(
        [sys.executable, "-m", "tests.support.rpc_peer", "--connect", server.full_name],
        cwd=REPO,
        env={**os.environ, SECRET_ENV: server.child_environment()[SECRET_ENV]},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            return runner.run(measure(server, calls, notifications))
    finally:
        server.close()
        try:
            peer.wait(timeout=10)
        except subprocess.TimeoutExpired:
            peer.kill()
            peer.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=2000, help="sequential no-op calls")
    parser.add_argument("--notifications", type=int, default=100_000, help="notifications in the flood")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line only")
    args = parser.parse_args(argv)
    figures = run(args.calls, args.notifications)
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"Cowork Qt IPC benchmark: {args.calls} calls, {args.notifications} notifications")
        print(report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
