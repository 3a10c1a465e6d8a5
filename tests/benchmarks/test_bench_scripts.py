"""The benchmark scripts still run and print their figures (tiny sizes; the figures are not judged)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.peers import REPO_ROOT


def test_the_ipc_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks.bench_ipc", "--calls", "50", "--notifications", "500"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label in (
        "asyncio client: no-op round trip p50",
        "asyncio client: no-op round trip p99",
        "asyncio client: notifications/s",
        "Qt client: no-op round trip p50",
        "Qt client: notifications/s",
        "Qt client: longest 10 ms heartbeat gap",
    ):
        assert label in result.stdout
