"""The checkpoint benchmark still runs and prints a figure for each of its measures (tiny sizes; the
figures are not judged here — the script prints them against their targets)."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.bench_checkpoint import TARGETS
from tests.support.peers import REPO_ROOT


def test_the_checkpoint_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_checkpoint",
            "--messages",
            "40",
            "--writes",
            "5",
            "--events",
            "200",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label, _, _, _ in TARGETS.values():
        assert label in result.stdout
