"""The tool runtime's benchmark script still runs and prints every figure (tiny sizes; not judged)."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.bench_tools import TARGETS
from tests.conftest import REPO_ROOT


def test_the_tools_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_tools",
            "--read-calls",
            "20",
            "--command-calls",
            "5",
            "--capture-mb",
            "4",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label, _, _, _ in TARGETS.values():
        assert label in result.stdout
    assert "ReadFile 4 KB via router: p50" in result.stdout
    assert "RunCommand `true`: p50" in result.stdout
    assert "peak RSS growth" in result.stdout
