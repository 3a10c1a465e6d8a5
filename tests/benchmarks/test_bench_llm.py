"""The LLM client benchmark still runs and prints every figure (tiny sizes; figures not judged)."""

from __future__ import annotations

import subprocess
import sys

from tests.benchmarks.bench_llm import TARGETS
from tests.conftest import REPO_ROOT


def test_the_llm_benchmark_prints_a_figure_for_every_measure() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.benchmarks.bench_llm",
            "--chunks",
            "300",
            "--runs",
            "1",
            "--calls",
            "2",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for label, _, _, _ in TARGETS.values():
        assert label in result.stdout
