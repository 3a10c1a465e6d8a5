"""The routing benchmark still runs and prints a figure for each of its measures (tiny sizes)."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.bench_routing import TARGETS
from tests.support.peers import REPO_ROOT


def test_the_routing_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_routing",
            *("--prepare-calls", "50", "--execute-calls", "20", "--write-calls", "5"),
            *("--preview-files", "3", "--preview-runs", "1"),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label, _, _, _ in TARGETS.values():
        assert label in result.stdout
