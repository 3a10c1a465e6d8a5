"""The backend benchmark still runs against a real server process and prints every figure (tiny sizes;
the figures are not judged here)."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.bench_backend import TARGETS
from tests.support.peers import REPO_ROOT


def test_the_backend_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_backend",
            *("--clients", "4", "--sessions", "40", "--uploads", "12", "--gets", "20", "--size", "2048"),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label, _, _, _ in TARGETS.values():
        assert label in result.stdout
