"""The thread benchmark script still runs and prints every figure (tiny sizes; figures not judged)."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.bench_thread import TARGETS
from tests.support.peers import REPO_ROOT


def test_the_thread_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks.bench_thread", "--messages", "60", "--iterations", "20"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label, _, _ in TARGETS.values():
        assert label in result.stdout
