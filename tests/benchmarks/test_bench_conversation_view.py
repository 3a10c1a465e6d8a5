"""The conversation view's benchmark script still runs and prints a figure for each of its measures
(tiny sizes; the figures are not judged here)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.benchmarks.bench_conversation_view import TARGETS
from tests.support.peers import REPO_ROOT


def test_the_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_conversation_view",
            *("--messages", "80", "--runs", "1", "--seconds", "0.3", "--rate", "2000"),
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label, _, _, _ in TARGETS.values():
        assert label in result.stdout
